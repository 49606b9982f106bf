"""The native replacement of Inductor's ``CachingAutotuner.run``, driven on
the CPU by a stand-in autotuner (the GPU tests drive it with real kernels):
what it records, that the launch itself is untouched, and that an error
stops recording but never the launch."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, ClassVar

import pytest
import torch
import tritontui
from conftest import dump, launches
from torch._inductor.runtime.triton_heuristics import CachingAutotuner


class _Config:
    kwargs: ClassVar[dict[str, int]] = {"XBLOCK": 1024}
    num_warps = 4
    num_stages = 1


class _Launcher:
    config = _Config()


class _Blocks:
    """A config of ``XBLOCK`` elements per program."""

    num_warps = 4
    num_stages = 1

    def __init__(self, block: int) -> None:
        self.kwargs = {"XBLOCK": block}


class _LauncherOf:
    def __init__(self, block: int) -> None:
        self.config = _Blocks(block)


class StandIn(CachingAutotuner):
    """An autotuner with only what the hook reads (no Triton kernel)."""

    def __init__(self, grid: Any = (4, 1, 1)) -> None:  # no super().__init__
        self.inductor_meta = {"kernel_name": "triton_poi_fused_add_0"}
        self.triton_meta = {
            "signature": {
                "in_ptr0": "*fp32",
                "in_out_ptr0": "*fp32",
                "out_ptr0": "*fp32",
                "xnumel": "i32",
                "XBLOCK": "constexpr",
            }
        }
        self.mutated_arg_names = ["in_out_ptr0"]
        self.launchers = [_Launcher()]
        self.configs = []
        self.heuristic_type = "POINTWISE"
        self.filename = None
        self.grid = grid

    def _interpret_args_grid(self, args: Any, config: Any) -> Any:
        if isinstance(self.grid, Exception):
            raise self.grid
        return args, self.grid


@pytest.fixture
def original_run(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Stands in for Inductor's own run: adds 1 to the in/out tensor and
    writes the output, and remembers how it was called."""
    calls: list[Any] = []

    def run(self: Any, *args: Any, stream: Any, **kwargs: Any) -> str:
        calls.append((args, stream, kwargs))
        args[1].add_(1)
        args[2].copy_(args[0] * 2)
        return "launched"

    monkeypatch.setattr(CachingAutotuner, "run", run)
    return calls


def test_launches_are_recorded_and_run_unchanged(tmp_path: Path, original_run: list[Any]) -> None:
    path = tmp_path / "t.msgpack"
    x, acc, out = torch.randn(64), torch.zeros(64), torch.empty(64)
    tuner = StandIn()
    before = tritontui.hash_tensor(acc)
    with tritontui.record(path):
        assert tuner.run(x, acc, out, 64, stream=0, extra="kept") == "launched"
        # Called through the class, as a subclass's super().run would.
        assert CachingAutotuner.run(tuner, x, acc, out, 64, stream=0) == "launched"
    assert CachingAutotuner.run.__name__ == "run"  # the original is back
    assert [(a[3], s, k) for a, s, k in original_run] == [(64, 0, {"extra": "kept"}), (64, 0, {})]
    first, second = launches(path)
    assert first["kernel"] == "triton_poi_fused_add_0" and first["backend"] == "triton"
    assert first["grid"] == [4, 1, 1] and second["seq"] == first["seq"] + 1
    names = [a["name"] for a in first["args"]]
    assert names == ["in_ptr0", "in_out_ptr0", "out_ptr0", "xnumel"]
    x_arg, acc_arg, out_arg, size = first["args"]
    assert (x_arg["access"], acc_arg["access"], out_arg["access"]) == ("in", "inout", "out")
    assert int(acc_arg["pre"], 16) == before and acc_arg["written"]
    assert int(x_arg["pre"], 16) == int(x_arg["post"], 16) == tritontui.hash_tensor(x)
    assert out_arg["pre"] is None and int(out_arg["post"], 16) == tritontui.hash_tensor(out)
    assert size["value"] == 64


@pytest.mark.internal_error
def test_an_error_stops_recording_but_not_the_launch(
    tmp_path: Path, original_run: list[Any]
) -> None:
    path = tmp_path / "t.msgpack"
    x, acc, out = torch.randn(8), torch.zeros(8), torch.empty(8)
    tuner = StandIn(grid=RuntimeError("grid expression failed"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tritontui.record(path):
            assert tuner.run(x, acc, out, 8, stream=0) == "launched"
            assert tuner.run(x, acc, out, 8, stream=0) == "launched"
    assert len(original_run) == 2 and torch.equal(acc, torch.full((8,), 2.0))
    stopped = [w for w in caught if "recording stopped" in str(w.message)]
    assert len(stopped) == 1 and "grid expression failed" in str(stopped[0].message)
    assert launches(path) == []


def test_grids_follow_the_sizes_and_the_config_autotuning_leaves(
    tmp_path: Path, original_run: list[Any]
) -> None:
    # The hook caches each config's kernel and each size's grid; a new
    # launchers list (as autotuning leaves) or a launcher replaced in the
    # same list must be seen.
    path = tmp_path / "t.msgpack"

    class Sized(StandIn):
        def _interpret_args_grid(self, args: Any, config: Any) -> Any:
            return args, (-(-args[3] // config.kwargs["XBLOCK"]), 1, 1)

    tuner = Sized()
    tuner.launchers = [_LauncherOf(1024)]
    x, acc, out = torch.randn(8), torch.zeros(8), torch.empty(8)
    with tritontui.record(path, hash="none"):
        for size in (64, 4096, 64):
            tuner.run(x, acc, out, size, stream=0)
        tuner.launchers = [_LauncherOf(256)]
        tuner.run(x, acc, out, 4096, stream=0)
        tuner.launchers[0] = _LauncherOf(128)
        tuner.run(x, acc, out, 4096, stream=0)
        tuner.run(x, acc, out, 64, stream=0)
    assert [r["grid"] for r in launches(path)] == [
        [1, 1, 1],
        [4, 1, 1],
        [1, 1, 1],
        [16, 1, 1],
        [32, 1, 1],
        [1, 1, 1],
    ]
    blocks = [r["config"]["XBLOCK"] for r in dump(path) if r["type"] == "kernel"]
    assert blocks == [1024, 256, 128]

"""The native aten observer (``recorder/observer/aten_observer.cpp``,
``recorder/src/python/aten_observer.rs``) records what the Python
dispatch mode records: the same ops, arguments, shapes and access, and
two runs of one program compare the same, recorded either way. Where the
mode itself changes what torch runs, the observer records what the
program runs unrecorded.

Truth for the comparisons is each program's own fingerprint of its
results (``_harness.write_fingerprint``), not the engine."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import torch
import tritontui
from conftest import ROOT, diff, launches, run_ok
from tritontui import _native, hooks

CORPUS = ROOT / "tests" / "corpus" / "programs"
THROUGH_THE_MODE = {"TRITONTUI_ATEN_OBSERVER": "0"}


def test_this_build_carries_an_observer_for_the_running_torch() -> None:
    # The suite installs the package built against the torch it runs
    # (scripts/test): a build that lost the observer falls back quietly.
    available, why = _native.observer_status()
    assert available, why


def test_a_recording_puts_no_dispatch_mode_on_the_stack(tmp_path: Path) -> None:
    # Counted from what is there (an earlier test's internal error under
    # another mode leaves the mode of its session there, by design).
    before = torch._C._len_torch_dispatch_stack()
    with tritontui.record(tmp_path / "t.msgpack"):
        assert isinstance(hooks._ATEN, hooks.aten.AtenObserver)
        assert torch._C._len_torch_dispatch_stack() == before
        torch.ones(3).add_(1)
    kernels = [r["kernel"] for r in launches(tmp_path / "t.msgpack")]
    assert kernels == ["aten::ones", "aten::add_.Tensor"], kernels


def test_the_mode_records_instead_when_told(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRITONTUI_ATEN_OBSERVER", "0")
    before = torch._C._len_torch_dispatch_stack()
    with tritontui.record(tmp_path / "t.msgpack"):
        assert isinstance(hooks._ATEN, hooks.aten.AtenRecorder)
        assert torch._C._len_torch_dispatch_stack() == before + 1
        torch.ones(3).add_(1)
    assert torch._C._len_torch_dispatch_stack() == before
    kernels = [r["kernel"] for r in launches(tmp_path / "t.msgpack")]
    assert kernels == ["aten::ones", "aten::add_.Tensor"], kernels


def _scalar_ops(trace: Path) -> list[tuple]:
    """Each launch's kernel and its non-tensor arguments' values."""
    values = []
    with tritontui.record(trace):
        x, i = torch.ones(4), torch.arange(4)
        b, z = torch.ones(4, dtype=torch.bool), torch.ones(4, dtype=torch.complex128)
        x.add_(1.5).mul_(2).add_(x, alpha=0.25)
        i.add_(3).sub_(-(2**62))
        torch.bitwise_and(b, True)
        z.mul_(1 + 2j)
        torch.where(b, x, 0.25)
    for r in launches(trace):
        args = tuple(
            (a["name"], type(a["value"]).__name__, a["value"]) for a in r["args"] if "value" in a
        )
        values.append((r["kernel"], args))
    return values


def test_scalar_arguments_are_recorded_as_the_mode_records_them(
    tmp_path: Path, monkeypatch
) -> None:
    # A Python scalar reaches the observer as a wrapped-number tensor,
    # which it hands over as the number itself (aten_observer.cpp,
    # wrapped_number_python).
    observed = _scalar_ops(tmp_path / "observer.msgpack")
    monkeypatch.setenv("TRITONTUI_ATEN_OBSERVER", "0")
    by_mode = _scalar_ops(tmp_path / "mode.msgpack")
    assert observed == by_mode
    values = {value for _, args in observed for _, _, value in args}
    assert {1.5, 2, 0.25, 3, -(2**62), True, "(1+2j)"} <= values, values


def test_a_recording_stopped_on_another_thread_leaves_no_second_claim(tmp_path: Path) -> None:
    # The observer is attached on the thread that starts recording; stopped
    # from another thread, it stays there until that thread records again,
    # which must not record each op twice.
    from concurrent.futures import ThreadPoolExecutor

    def record_again() -> None:
        with tritontui.record(tmp_path / "second.msgpack"):
            torch.ones(3).add_(1)

    with ThreadPoolExecutor(max_workers=1) as one_thread:
        one_thread.submit(tritontui.start, tmp_path / "first.msgpack").result()
        tritontui.stop()
        one_thread.submit(record_again).result()
    kernels = [r["kernel"] for r in launches(tmp_path / "second.msgpack")]
    assert kernels == ["aten::ones", "aten::add_.Tensor"], kernels


def test_ops_on_an_autograd_thread_and_inside_composites_are_recorded_once(
    tmp_path: Path,
) -> None:
    # Linear is a composite (aten::linear decomposes into t and addmm):
    # the observer records addmm, as the mode does, and none of the ops
    # addmm's kernel calls; backward's ops are recorded too.
    layer = torch.nn.Linear(4, 3)
    x = torch.randn(2, 4)
    with tritontui.record(tmp_path / "t.msgpack"):
        layer(x).sum().backward()
    kernels = [r["kernel"] for r in launches(tmp_path / "t.msgpack")]
    assert "aten::linear" not in kernels and "aten::t" not in kernels, kernels
    assert kernels.count("aten::addmm") == 1, kernels
    assert "aten::mm" in kernels and "aten::sum.dim_IntList" in kernels, kernels


def test_torch_tensor_s_own_fill_is_left_out_as_the_mode_leaves_it(tmp_path: Path) -> None:
    # torch.tensor() fills its new tensor with dispatch modes kept out: the
    # empty it allocates is no launch (recorded, it would be memory
    # allocated and never written, read by the next op).
    with tritontui.record(tmp_path / "t.msgpack"):
        torch.tensor([1.0, 2.0]).mul(2)
    kernels = [r["kernel"] for r in launches(tmp_path / "t.msgpack")]
    assert kernels == ["aten::mul.Tensor"], kernels


def test_a_collective_backend_s_own_threads_are_not_observed(tmp_path: Path) -> None:
    # gloo's workers get the recording thread's state (its RecordFunction
    # callbacks with it) and copy a gather's results out of their own
    # buffer there. Recorded, those copies were root causes on a rank whose
    # data was equal ("divergent-input: src"), on a GPU shared by two
    # ranks; a dispatch mode never saw them.
    import torch.distributed as dist

    dist.init_process_group("gloo", rank=0, world_size=1, store=dist.HashStore())
    try:
        t = torch.arange(4.0)
        gathered, flat = [torch.empty(4)], torch.empty(4)
        with tritontui.record(tmp_path / "t.msgpack"):
            dist.all_gather(gathered, t)
            dist.all_gather_into_tensor(flat, t)
            dist.all_reduce(t)
    finally:
        dist.destroy_process_group()
    recorded = launches(tmp_path / "t.msgpack")
    kernels = [r["kernel"] for r in recorded]
    assert kernels == ["c10d::allgather_", "c10d::_allgather_base_", "c10d::allreduce_"], kernels
    assert len({r["thread"] for r in recorded}) == 1, recorded


def _structure(trace: Path) -> list[tuple]:
    """Each launch's kernel and its arguments' names, dtypes, shapes,
    access and allocation: what two recordings of one program share
    whatever the memory held (a buffer's bytes before its first write)."""
    return [
        (
            r["kernel"],
            tuple(
                (a["name"], a.get("dtype"), tuple(a.get("shape") or ()), a["access"])
                for a in r["args"]
            ),
        )
        for r in launches(trace)
    ]


# Autograd accumulates a gradient in place (`add_`) unless a tensor looks
# like a subclass, which every tensor does while a dispatch mode is on the
# stack (`isTensorSubclassLike`): under the mode the program adds out of
# place. The observer records what the program does unrecorded.
_IN_PLACE = (
    "aten::add_.Tensor",
    ("self", "inout"),
    ("other", "in"),
)
_OUT_OF_PLACE = ("aten::add.Tensor", ("self", "in"), ("other", "in"), ("result", "out"))


def _is_the_modes_accumulation(observed: tuple, by_mode: tuple) -> bool:
    """Whether two launches are autograd's one accumulation, in place as
    the program runs it and out of place as the mode makes it run."""
    kernel_a, args_a = observed
    kernel_b, args_b = by_mode
    return (
        (kernel_a, *((n, acc) for n, _, _, acc in args_a)) == _IN_PLACE
        and (kernel_b, *((n, acc) for n, _, _, acc in args_b)) == _OUT_OF_PLACE
        and [a[1:3] for a in args_a] == [b[1:3] for b in args_b[:2]]
    )


def _record(name: str, out: Path, env: dict[str, str], cwd: Path) -> str:
    """Records corpus program ``name`` into ``out``; its fingerprint."""
    fingerprint = out.with_suffix(".json")
    command = [sys.executable, str(CORPUS / f"{name}.py"), "--out", str(out)]
    run_ok([*command, "--fingerprint", str(fingerprint)], cwd, env)
    return fingerprint.read_text()


_GPU = [
    "gpu_eager_against_compiled",
    "gpu_gpt_eager_against_compiled",
    "gpu_attention_seed",
    "gpu_host_copy",
    "gpu_index_add_fwd_bwd",
]


@pytest.mark.parametrize(
    "name",
    [
        *(pytest.param(name, marks=pytest.mark.gpu) for name in _GPU),
        "gpt_eager_against_compiled",
        "cnn_bn_sgd",
        "clip_accumulate",
        "dropout_seed",
        "host_reads",
        "generator_profiler",
        "func_per_sample_grads",
        "index_add_fwd_bwd",
    ],
)
def test_the_observer_records_a_corpus_program_as_the_mode_does(
    name: str, tmp_path: Path, inductor_cache: Path
) -> None:
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache)}
    if not name.startswith("gpu_"):
        env["CUDA_VISIBLE_DEVICES"] = ""
    env.pop("TRITONTUI_RECORD", None)
    observed, by_mode = tmp_path / "observer.msgpack", tmp_path / "mode.msgpack"
    results = _record(name, observed, env, tmp_path)
    results_by_mode = _record(name, by_mode, {**env, **THROUGH_THE_MODE}, tmp_path)
    a, b = _structure(observed), _structure(by_mode)
    assert len(a) == len(b), f"{len(a)} launches observed, {len(b)} by the mode"
    for seq, (x, y) in enumerate(zip(a, b, strict=True)):
        assert x == y or _is_the_modes_accumulation(x, y), f"launch {seq}: {x} | {y}"
    status, report = diff(observed, by_mode)
    if json.loads(results) == json.loads(results_by_mode):
        # Recorded either way, one program's runs compare as two runs do.
        assert status == 0, json.dumps(report)[:3000]

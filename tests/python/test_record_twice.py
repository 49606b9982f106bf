"""The documented ways to record, each run twice in one process (as in a
notebook or a test) with the state it changes reset between the blocks:
the two traces compare identical, as two processes' would (issue 55)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch
import tritontui
from conftest import diff, dump


def _model() -> tuple[torch.nn.Module, Callable[..., torch.Tensor], torch.Tensor]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.LayerNorm(32), torch.nn.GELU(), torch.nn.Linear(32, 4)
    )
    batch = torch.randn(8, 16)
    return model, torch.compile(model), batch


def _identical(a: Path, b: Path) -> dict:
    status, report = diff(a, b)
    assert (status, report["verdict"]) == (0, "identical"), report
    return report


@pytest.mark.parametrize(
    "options",
    [{}, {"stats": True}, {"hash": "none", "hash_fn": "norm"}],
    ids=["defaults", "stats", "norms"],
)
def test_the_readme_example_twice_in_one_process(tmp_path: Path, options: dict) -> None:
    model, compiled_model, batch = _model()
    kept = []
    for run in ("run0", "run1"):
        model.zero_grad()
        # README.md, "Recording your program".
        with tritontui.record(tmp_path / f"{run}.msgpack", **options):
            loss = compiled_model(batch).sum()
            loss.backward()
        kept.append(loss)
    assert torch.equal(kept[0], kept[1])
    report = _identical(tmp_path / "run0.msgpack", tmp_path / "run1.msgpack")
    # The loss of run 0 is alive, unchanged, through run 1.
    assert report["results"]["held_b"] > report["results"]["held_a"], report["results"]


def test_the_recorder_guide_example_twice_in_one_process(tmp_path: Path) -> None:
    model, compiled_model, batch = _model()
    for run in ("run0", "run1"):
        model.zero_grad()
        # docs/recorder.md, "Recording".
        with tritontui.record(tmp_path / f"{run}.msgpack"):
            loss = compiled_model(batch).sum()
            loss.backward()
            tritontui.mark("after step 0")
    report = _identical(tmp_path / "run0.msgpack", tmp_path / "run1.msgpack")
    # The gradients are results of each block, paired by name.
    assert report["results"]["compared"] >= 4, report["results"]


def test_start_and_stop_twice_in_one_process(tmp_path: Path) -> None:
    _, compiled_model, batch = _model()
    outputs = []
    with torch.no_grad():
        for run in ("run0", "run1"):
            tritontui.start(tmp_path / f"{run}.msgpack")
            outputs.append(compiled_model(batch))
            tritontui.stop()
    _identical(tmp_path / "run0.msgpack", tmp_path / "run1.msgpack")


def test_a_result_names_its_parameter_gradient_and_optimizer_state(tmp_path: Path) -> None:
    model, compiled_model, batch = _model()
    optimizer = torch.optim.AdamW(model.parameters())
    with tritontui.record(tmp_path / "t.msgpack"):
        compiled_model(batch).sum().backward()
        optimizer.step()
    names = {r.get("name") for r in dump(tmp_path / "t.msgpack") if r["type"] == "result"}
    assert {"0.weight", "0.weight.grad", "0.weight.exp_avg", "1.bias.exp_avg_sq"} <= names, names

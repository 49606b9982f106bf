"""What the recorder did not see is never called agreement: a program
whose recording has gaps (graphs run unrecorded, kernels filtered out)
is reported inconclusive or divergent, never deterministic; and a
program without numpy records to the end."""

from __future__ import annotations

import subprocess
import warnings

import pytest
import torch
import tritontui
from conftest import binary, dump


def test_a_program_without_numpy_records_a_generator_to_the_end(run_program, tmp_path):
    proc = run_program("generator_no_numpy.py", str(tmp_path / "t.msgpack"))
    assert "recording stopped" not in proc.stderr, proc.stderr
    records = dump(tmp_path / "t.msgpack")
    end = [r for r in records if r["type"] == "end"]
    assert end and end[0]["reason"] == "stopped", end
    generators = [
        a["value"]
        for r in records
        if r["type"] == "launch" and r["kernel"].startswith("aten::randn")
        for a in r["args"]
        if isinstance(a.get("value"), str) and a["value"].startswith("<torch.Generator")
    ]
    assert generators and "seed=7 state=" in generators[0], generators
    assert any(r["type"] == "result" for r in records)


def test_check_determinism_is_inconclusive_when_kernels_were_filtered(tmp_path):
    f = torch.compile(lambda x: (x * 2).sin())
    x = torch.randn(256)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = tritontui.check_determinism(
            f, x, dir=tmp_path, record_options={"kernels": "cpp_*"}
        )
    assert not report.deterministic
    assert report.inconclusive_runs == [1], report.reports
    assert any("only kernels matching `cpp_*`" in gap for gap in report.gaps), report.gaps
    assert str(report).startswith("inconclusive:"), str(report)
    with pytest.raises(AssertionError, match="inconclusive"):
        tritontui.assert_deterministic(f, x, record_options={"kernels": "cpp_*"})


def test_results_that_could_not_be_recorded_leave_a_gap(tmp_path, monkeypatch):
    from tritontui import _results

    def broken(named: bool = True) -> list[torch.Tensor]:
        raise RuntimeError("cannot walk the heap")

    f = torch.compile(lambda x: x + 1)
    x = torch.ones(8)
    with tritontui.record(tmp_path / "a.msgpack"):
        a = f(x)
    monkeypatch.setattr(_results, "live_tensors", broken)
    with (
        pytest.warns(RuntimeWarning, match="results were not recorded"),
        tritontui.record(tmp_path / "b.msgpack"),
    ):
        b = f(x)
    assert torch.equal(a, b)
    gaps = [r for r in dump(tmp_path / "b.msgpack") if r["type"] == "gap"]
    assert [(g["what"], g["detail"]) for g in gaps] == [
        ("results", "RuntimeError('cannot walk the heap')")
    ]
    proc = subprocess.run(
        [binary(), "diff", str(tmp_path / "a.msgpack"), str(tmp_path / "b.msgpack")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "not recorded: results: RuntimeError('cannot walk the heap') (B)" in proc.stdout


def test_an_aot_inductor_package_is_named_as_run_unrecorded(run_program, tmp_path):
    trace = tmp_path / "t.msgpack"
    proc = run_program("aoti_package.py", str(trace), str(tmp_path / "m.pt2"))
    assert "an AOTInductor model that calls none of the recorder's hooks" in proc.stderr
    unrecorded = [
        r
        for r in dump(trace)
        if r["type"] == "compile" and r["info"].get("unrecorded") == "aot_inductor"
    ]
    assert len(unrecorded) == 1 and unrecorded[0]["name"].startswith("AOTInductor model ")
    proc = subprocess.run(
        [binary(), "diff", str(trace), str(trace)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert f"graph {unrecorded[0]['name']} (aot_inductor) ran without" in proc.stdout

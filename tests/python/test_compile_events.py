"""Dynamo's compile events in the trace, and what they explain."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import tritontui
from conftest import ROOT, diff, dump, run_ok
from tritontui.hooks import autotuning


def test_a_recompile_is_explained_by_its_guard_and_a_graph_break_by_its_reason(
    run_program, tmp_path: Path
) -> None:
    run_program("recompile.py", "a.msgpack")
    run_program("recompile.py", "b.msgpack", "again")
    events = [r for r in dump(tmp_path / "b.msgpack") if r["type"] == "compile"]
    breaks = [e for e in events if e["event"] == "graph_break"]
    assert breaks and all(e["info"]["reason"] == "Data-dependent branching" for e in breaks)
    assert breaks[0]["info"]["location"].endswith("recompile.py:15"), breaks[0]
    caches = [e["info"]["state"] for e in events if e["event"] == "fx_graph_cache"]
    assert caches and set(caches) <= {"hit", "miss", "bypass"}, caches
    started = [e for e in events if e["event"] == "dynamo_start" and e["name"] == "step"]
    assert [e["info"]["compile_id"] for e in started] == ["0/0", "0/1"], started
    # Each compilation's guards: the first accepts x of size 8 only.
    guards = {
        e["info"]["compile_id"]: e["info"]["guards"] for e in events if e["event"] == "guards"
    }
    assert "TENSOR_MATCH" in guards["0/0"] and "size=[8]" in guards["0/0"], guards
    assert "Guard latency" not in guards["0/0"]
    _, report = diff(tmp_path / "a.msgpack", tmp_path / "b.msgpack")
    recompiles = [d for d in report["compile_differences"] if d["event"] == "recompile"]
    assert recompiles[0]["run"] == "B" and recompiles[0]["function"] == "step", recompiles
    assert "tensor 'x' size mismatch at index 0. expected 8, actual 16" in recompiles[0]["detail"]
    # B's launches of the second call are explained by that recompile.
    first = report["first_divergence"]
    assert first["kind"] == "structural", first
    assert "B recompiled step (compile 0/1)" in first["detail"], first


@pytest.mark.gpu
def test_autotuning_is_recorded_and_explains_a_launch_config_divergence(tmp_path: Path) -> None:
    # The corpus's program: a row sum whose reduction Inductor autotunes;
    # run B's benchmark is noisy and picks another config.
    program = ROOT / "tests" / "corpus" / "programs" / "gpu_autotune_noise.py"
    env = {k: v for k, v in os.environ.items() if k != "TRITONTUI_RECORD"}

    def record(run: str, *flags: str) -> Path:
        trace = tmp_path / f"{run}.msgpack"
        fingerprint = tmp_path / f"{run}.json"
        outputs = ["--out", str(trace), "--fingerprint", str(fingerprint)]
        run_ok([sys.executable, str(program), *outputs, *flags], program.parent, env)
        return trace

    a, b = record("a"), record("b", "--variant")
    records = dump(a)
    tuned = [r for r in records if r["type"] == "compile" and r["event"] == "autotune"]
    # max-autotune: the configs are benchmarked, then a coordinate descent
    # starts from the fastest.
    assert [r["info"]["method"] for r in tuned] == ["benchmark", "coordinate_descent"], tuned
    benchmark, search = (r["info"] for r in tuned)
    tried = [entry.rsplit(": ", 1) for entry in benchmark["tried"].split("; ")]
    assert len(tried) == benchmark["configs"] > 1, benchmark
    fastest = min(tried, key=lambda entry: float(entry[1].removesuffix(" ms")))[0]
    assert benchmark["chosen"] == fastest == search["start"], (benchmark, search)
    # The config the search chose is the one launched.
    kernel = next(r for r in records if r["type"] == "kernel" and r["name"] == tuned[0]["name"])
    launched = sorted(f"{k}={v}" for k, v in kernel["config"].items())
    assert sorted(search["chosen"].split()) == launched, (search, kernel)
    cache = [r for r in records if r["type"] == "compile" and r["event"] == "autotune_cache"]
    assert [r["info"]["state"] for r in cache if r["name"] == tuned[0]["name"]] == ["miss"]
    code, report = diff(a, b)
    first = report["first_divergence"]
    assert code == 1 and first["kind"] == "launch-config", first
    for said in ("A benchmarked", "B benchmarked", "then coordinate descent"):
        assert said in first["detail"], first
    assert "close enough for timing noise to decide" in first["detail"], first


@pytest.mark.internal_error
def test_a_benchmark_is_recorded_with_every_config_and_an_error_there_stops_only_the_recording(
    tmp_path: Path,
) -> None:
    # What Inductor's benchmark_all_configs hands back: each launcher
    # (whose config it ran) with its time.
    class Launcher:
        def __init__(self, block: int) -> None:
            self.config = SimpleNamespace(kwargs={"R0_BLOCK": block}, num_warps=4, num_stages=1)

    slow, fast = Launcher(8), Launcher(64)
    tuner = SimpleNamespace(inductor_meta={"kernel_name": "triton_red_x_0"}, compile_id="0/0")
    benchmark = autotuning._benchmarked(lambda self: {slow: 0.02, fast: 0.01})
    with tritontui.record(tmp_path / "t.msgpack"):
        assert benchmark(tuner) == {slow: 0.02, fast: 0.01}
    (record,) = [r for r in dump(tmp_path / "t.msgpack") if r.get("event") == "autotune"]
    assert record["name"] == "triton_red_x_0"
    assert record["info"] == {
        "method": "benchmark",
        "configs": 2,
        "tried": "R0_BLOCK=8 num_warps=4 num_stages=1: 0.02 ms; "
        "R0_BLOCK=64 num_warps=4 num_stages=1: 0.01 ms",
        "chosen": "R0_BLOCK=64 num_warps=4 num_stages=1",
        "chosen_ms": 0.01,
        "compile_id": "0/0",
    }
    # A launcher the hook cannot read: the timings still come back.
    broken = autotuning._benchmarked(lambda self: {object(): 0.01})
    stopped = pytest.warns(RuntimeWarning, match="recording stopped")
    with stopped, tritontui.record(tmp_path / "u.msgpack"):
        assert len(broken(tuner)) == 1


def test_a_compile_record_keeps_scalar_details_and_the_text_of_anything_else(
    tmp_path: Path,
) -> None:
    from tritontui import _active

    details = {"n": 3, "big": 2**64 - 1, "half": 0.5, "ok": True, "none": None, "pair": [1, 2]}
    with tritontui.record(tmp_path / "t.msgpack"):
        _active.active().file.compile("graph", "g", details)
    records = dump(tmp_path / "t.msgpack")
    [compile] = [r for r in records if r["type"] == "compile" and r["name"] == "g"]
    assert (compile["event"], compile["name"], compile["pid"]) == ("graph", "g", os.getpid())
    assert compile["info"] == {**details, "pair": "[1, 2]"}


def test_each_graph_s_cache_record_holds_the_inductor_config_it_compiled_with(
    tmp_path: Path,
) -> None:
    import torch

    x = torch.linspace(-3, 3, 100)
    with tritontui.record(tmp_path / "t.msgpack"):
        # The config the program sets while recording, and the options one
        # compile is given (patched in only while it compiles).
        torch._inductor.config.cpp.simdlen = 1
        try:
            torch.compile(lambda t: t.sin() + 1)(x)
        finally:
            torch._inductor.config.cpp.simdlen = None
        torch.compile(lambda t: t.cos() * 2, options={"cpp.simdlen": 8})(x)
        torch.compile(lambda t: t.tan() - 3)(x)
    records = dump(tmp_path / "t.msgpack")
    caches = [
        r["info"] for r in records if r["type"] == "compile" and r["event"] == "fx_graph_cache"
    ]
    configs = [{k: v for k, v in info.items() if k.startswith("inductor.")} for info in caches]
    assert configs == [
        {"inductor.cpp.simdlen": "1"},
        {"inductor.cpp.simdlen": "8"},
        {},
    ], configs
    # Each graph's inputs name the graph by the key its cache record has.
    graphs = [r["graph"] for r in records if r["type"] == "input"]
    assert graphs == [info["key"] for info in caches], (graphs, caches)


def test_a_graph_break_s_reason_is_read_past_its_lead_and_a_frame_given_up_on_says_so() -> None:
    from tritontui.hooks.compile_events import graph_break

    # torch 2.11's artifacts, cut short: a reason whose line only leads
    # into it, and a frame Dynamo gave up on, its exception last.
    led = (
        "Graph break in user code at /w/kv.py:10\n"
        "Graph Break Reason: Encountered graph break that we cannot resume from. "
        "Graph break encountered:\n\n"
        "Backend compiler exception\n"
        "  Explanation: Backend compiler `inductor` failed with aten._local_scalar_dense.default\n"
        "  Hint: Report an issue to the backend compiler repo.\n"
    )
    where, reason = graph_break(led)
    assert where == "/w/kv.py:10"
    assert reason.endswith(
        "Graph break encountered: Backend compiler exception (Backend compiler `inductor` "
        "failed with aten._local_scalar_dense.default)"
    ), reason
    given_up = (
        "WON'T CONVERT forward /w/kv.py line 10\n"
        "========== TorchDynamo Stack Trace ==========\n"
        "Traceback (most recent call last):\n"
        '  File "/t/output_graph.py", line 2664, in _call_user_compiler\n'
        "torch._subclasses.fake_tensor.DataDependentOutputException: "
        "aten._local_scalar_dense.default\n\n"
        "While executing %setitem : [num_users=0] = call_function[target=operator.setitem]\n"
    )
    assert graph_break(given_up) == (
        "/w/kv.py:10",
        "`forward` runs eagerly: torch._subclasses.fake_tensor.DataDependentOutputException: "
        "aten._local_scalar_dense.default",
    )
    # The plain reason stays as it was.
    plain = "Graph break in user code at /w/r.py:15\nGraph Break Reason: Data-dependent branching\n"
    assert graph_break(plain) == ("/w/r.py:15", "Data-dependent branching")

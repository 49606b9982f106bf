"""Dynamo's compile events in the trace, and what they explain."""

from __future__ import annotations

from pathlib import Path

from conftest import diff, dump


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
    _, report = diff(tmp_path / "a.msgpack", tmp_path / "b.msgpack")
    recompiles = [d for d in report["compile_differences"] if d["event"] == "recompile"]
    assert recompiles[0]["run"] == "B" and recompiles[0]["function"] == "step", recompiles
    assert "tensor 'x' size mismatch at index 0. expected 8, actual 16" in recompiles[0]["detail"]
    # B's launches of the second call are explained by that recompile.
    first = report["first_divergence"]
    assert first["kind"] == "structural", first
    assert "B recompiled step (compile 0/1)" in first["detail"], first

"""Where in the program's modules each compiled kernel computes: the
``kernel_site`` records taken from Inductor's code generation, kept for
a later process whose compile is a cache hit."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import diff, dump, launches
from tritontui.hooks.kernel_sites import normalize


def sites(trace: Path) -> list[dict]:
    return [
        {"kernel": r["name"], **{k: v for k, v in r["info"].items() if k != "graph"}}
        for r in dump(trace)
        if r["type"] == "compile" and r["event"] == "kernel_site"
    ]


def test_dynamo_s_module_names_become_the_eager_paths() -> None:
    assert normalize("L['self'].layers[0]._modules['mlp']") == "layers.0.mlp"
    assert normalize("L['fn'].1.norm") == "1.norm"
    assert normalize("G['model'].blocks.2") == "blocks.2"
    assert normalize("L['self']") == ""


def test_each_kernel_names_its_modules_and_ops_on_a_compile_and_on_a_cache_hit(
    run_program, tmp_path: Path
) -> None:
    run_program("module_sites.py", "first.msgpack", "planted")
    run_program("module_sites.py", "again.msgpack", "planted")
    first, again = sites(tmp_path / "first.msgpack"), sites(tmp_path / "again.msgpack")
    caches = {
        r["info"]["state"]
        for r in dump(tmp_path / "again.msgpack")
        if r["type"] == "compile" and r["event"] == "fx_graph_cache"
    }
    assert caches <= {"hit"}, caches  # the second process generated no code
    assert first and again == first, (first, again)
    rounding = [s for s in first if "round" in s["kernel"] and "1=aten.round" in s["ops"]]
    assert rounding, first
    # The backward's ops are named by the forward module they differentiate.
    sums = {op for s in first for op in s["ops"].split(";") if op.endswith("=aten.sum")}
    assert {"0.fc=aten.sum", "1.fc=aten.sum"} <= sums, first
    # An op traced outside any known module is not given one.
    assert all(not op.startswith("=") for s in first for op in s["ops"].split(";")), first


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_diff_names_the_ops_only_one_program_s_kernel_computes(
    run_program, tmp_path: Path, device: str
) -> None:
    env = {"TRITONTUI_SAMPLES": "1", "MODULE_SITES_DEVICE": device}
    run_program("module_sites.py", "a.msgpack", env=env)
    run_program("module_sites.py", "b.msgpack", "planted", env=env)
    # An extern kernel inside the compiled graph is not given the compiled
    # root's module by the frames (its compile would have to name it).
    externs = [r for r in launches(tmp_path / "a.msgpack") if r["kernel"].startswith("aten::addmm")]
    assert externs and all(r.get("module") is None for r in externs), externs
    code, report = diff(tmp_path / "a.msgpack", tmp_path / "b.msgpack")
    assert code == 1, report
    first = report["first_divergence"]
    assert first["kind"] == "accuracy", first
    # The planted ops, in module 1 (the backward it needs may be fused too).
    # (On a GPU Inductor also moves block 1's Linear bias into that kernel.)
    assert "only B's kernel computes" in first["detail"], first
    assert "`aten.mul`, `aten.round`, `aten.div`" in first["detail"], first
    past = report["accuracy"]["first_past_bound"]
    assert {"module": "1", "op": "aten.round"} in past["b_only_ops"], past
    assert "1" in past["b_modules"], past


def test_a_module_called_twice_and_its_extern_kernels_are_named_by_call(
    run_program, tmp_path: Path
) -> None:
    run_program("shared_module.py", "eager.msgpack")
    run_program("shared_module.py", "compiled.msgpack", "compiled")
    eager = {r.get("module") for r in launches(tmp_path / "eager.msgpack")}
    assert {"fc", "fc@1", "out"} <= eager, eager
    # The compiled Linears are extern kernels: each call site names its call
    # last (the second call's also reads the weight the first transposed).
    externs = [s for s in sites(tmp_path / "compiled.msgpack") if s["kernel"] == "aten::addmm"]
    assert [s["modules"].split(";")[-1] for s in externs] == ["fc", "fc@1", "out"], externs
    _, report = diff(tmp_path / "eager.msgpack", tmp_path / "compiled.msgpack")
    named = {
        (p["a_module"], p["b_module"])
        for p in report["accuracy"]["aligned"]
        if p["b_kernel"].startswith("aten::addmm")
    }
    assert {("fc", "fc"), ("fc@1", "fc@1"), ("out", "out")} <= named, report["accuracy"]

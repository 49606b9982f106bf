"""Graphs with a C++ wrapper (``cpp_wrapper``, AOTInductor packages) are
recorded launch by launch on the CPU: the same kernels, arguments and
hashes as the Python wrapper's, a nondeterministic C++ kernel named as
the root cause, packages recorded in a fresh process, caches never shared
between hooked and stock code, and what was not hooked said so."""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

import pytest
import torch
import tritontui
from conftest import check, diff, dump, launches

# The Python wrapper's own allocations, which a C++ wrapper makes in C++.
ALLOCATIONS = ("empty_strided_cpu",)


def tensors(launch: dict) -> list[tuple[str, str | None, str | None]]:
    """(access, hash before, hash after) of each tensor argument."""
    return [(a["access"], a.get("pre"), a.get("post")) for a in launch["args"] if "shape" in a]


def arguments(launch: dict) -> list[tuple]:
    """Each argument's name, access, hashes (before the launch only of
    what it reads alone: a buffer it also writes may hold what the
    allocator left there) and value if a scalar."""
    return [
        (
            a["name"],
            a["access"],
            a.get("pre") if a["access"] == "in" else None,
            a.get("post"),
            a.get("value"),
        )
        for a in launch["args"]
    ]


def test_a_cpp_wrapper_graph_records_what_the_python_wrapper_records(run_program, tmp_path):
    traces = {}
    for wrapper in ("cpp", "python"):
        traces[wrapper] = tmp_path / f"{wrapper}.msgpack"
        run_program("cpp_wrapper_sites.py", str(traces[wrapper]), wrapper)
    cpp, python = (
        [r for r in launches(traces[w]) if r["kernel"] not in ALLOCATIONS]
        for w in ("cpp", "python")
    )
    assert len(cpp) == len(python) == 8, [r["kernel"] for r in cpp]
    for ours, theirs in zip(cpp, python, strict=True):
        if theirs["kernel"].startswith("cpp_fused_"):
            # The same C++ kernel: name, arguments, access and hashes.
            assert ours["kernel"] == theirs["kernel"]
            assert arguments(ours) == arguments(theirs)
        else:
            # An extern kernel: its C shim in C++, its aten op in Python;
            # the same tensors read and written, in the schema's order or
            # the shim's.
            assert ours["kernel"].startswith("aoti_torch_"), ours["kernel"]
            assert sorted(tensors(ours), key=str) == sorted(tensors(theirs), key=str)
    names = [r["kernel"] for r in cpp]
    assert "aoti_torch_cpu_sort_stable" in names  # outputs returned as handles
    assert "aoti_torch_cpu_scatter_reduce_two_out" in names  # the scatter fallback
    assert "aoti_torch_index_put_out" in names  # the index_put fallback
    records = dump(traces["cpp"])
    assert not [r for r in records if r["type"] == "gap"]
    assert not [r for r in records if r["type"] == "compile" and "unrecorded" in r.get("info", {})]


def test_check_names_the_nondeterministic_kernel_of_a_cpp_wrapper_program(
    tmp_path: Path, inductor_cache: Path
) -> None:
    # The adds collide only while both threads run at once, which a busy
    # two-core machine does not always give: up to five pairs of runs.
    for _ in range(5):
        proc = check(tmp_path, inductor_cache, "cpp_wrapper_scatter.py", "-n", "2", "--json")
        verdict = json.loads(proc.stdout)
        report = verdict["comparisons"][0]["report"]
        assert report["gaps"] == {"a": [], "b": []}, report["gaps"]
        if report["results"]["differ"]:
            break
        # The atomic adds landed in the same order: every launch agreed.
        assert (proc.returncode, verdict["verdict"]) == (0, "deterministic"), proc.stderr
    else:
        raise AssertionError("five pairs of runs of colliding atomic adds gave equal results")
    assert (proc.returncode, verdict["verdict"]) == (1, "nondeterministic"), proc.stderr
    first = report["first_divergence"]
    assert first["kernel"].startswith("cpp_fused_"), first
    assert "index_add" in first["kernel"], first
    assert first["kind"] == "nondeterministic-kernel", first


def test_a_hooked_package_records_its_launches_in_a_fresh_process(run_program, tmp_path):
    hooked, stock = tmp_path / "hooked.pt2", tmp_path / "stock.pt2"
    run_program("aoti_hooked_package.py", "compile", str(hooked))
    run_program("aoti_hooked_package.py", "compile", str(stock), "--stock")
    traces = [tmp_path / f"{run}.msgpack" for run in "ab"]
    for trace in traces:
        run_program(
            "aoti_hooked_package.py", "run", str(hooked), str(tmp_path / "out.pt"), str(trace)
        )
    recorded = launches(traces[0])
    kinds = {r["kernel"].partition("_fused_")[0] for r in recorded}
    assert {"cpp", "aoti_torch_cpu_addmm_out"} <= kinds, [r["kernel"] for r in recorded]
    records = dump(traces[0])
    assert not [r for r in records if r["type"] == "compile" and "unrecorded" in r.get("info", {})]
    inputs = [r for r in records if r["type"] == "input"]
    assert len(inputs) == 3, inputs
    status, report = diff(*traces)
    if report["results"]["differ"]:
        first = report["first_divergence"]
        assert "index_add" in first["kernel"] and first["kind"] == "nondeterministic-kernel", first
    else:
        assert status == 0, report
    # Without a recorder, the hooked package computes what the stock one does.
    outputs = {}
    for name, package in (("hooked", hooked), ("stock", stock)):
        outputs[name] = tmp_path / f"{name}.pt"
        run_program("aoti_hooked_package.py", "run", str(package), str(outputs[name]))
    hooked_out, stock_out = (torch.load(outputs[n]) for n in ("hooked", "stock"))
    assert torch.equal(hooked_out[0], stock_out[0])
    assert torch.allclose(hooked_out[1], stock_out[1], atol=1e-3)


def test_a_graph_compiled_before_recording_is_said_unrecorded(run_program, tmp_path):
    trace = tmp_path / "t.msgpack"
    proc = run_program("cpp_wrapper_compiled_before.py", str(trace))
    assert "before recording started" in proc.stderr, proc.stderr
    unrecorded = [
        r
        for r in dump(trace)
        if r["type"] == "compile" and r.get("info", {}).get("unrecorded") == "cpp_wrapper"
    ]
    assert len(unrecorded) == 1, unrecorded
    assert not launches(trace)


def test_hooked_and_stock_compiles_never_share_a_cache_entry(run_program, tmp_path):
    cache = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache")}
    proc = run_program("compile_cache.py", str(tmp_path / "t"), "rur", "cpp_wrapper", env=cache)
    compiles = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert compiles == [
        {"recorded": True, "served": False, "hooked": True},
        {"recorded": False, "served": False, "hooked": False},
        {"recorded": True, "served": True, "hooked": True},
    ]
    assert launches(tmp_path / "t.2.msgpack"), "the cached hooked graph recorded nothing"


def test_the_tensors_of_a_recorded_cpp_wrapper_launch_are_freed(run_program, tmp_path):
    trace = tmp_path / "t.msgpack"
    proc = run_program("cpp_wrapper_frees.py", str(trace))
    counts = json.loads(proc.stdout.splitlines()[-1])
    # Torch's singular alloc_tensor_by_stealing_from_void_ptr copies the
    # tensor and never frees the handle: each call kept its buffers alive.
    assert len(set(counts)) == 1, counts
    kernels = {r["kernel"] for r in launches(trace)}
    assert "aoti_torch_cpu_sort_stable" in kernels, kernels
    assert any(k.startswith("cpp_fused_") for k in kernels), kernels


def test_a_launch_that_raised_between_its_hooks_leaves_a_gap(tmp_path):
    from tritontui import _native
    from tritontui.hooks import cpp_wrapper

    # What generated code calls: the native hook, with a static site
    # string and the values (here a tensor handle).
    launch = ctypes.CDLL(_native.__file__).tritontui_launch
    launch.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
    pointer = ctypes.pythonapi.PyCapsule_GetPointer
    pointer.restype, pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    site = ctypes.create_string_buffer(b"cpp\x1fcpp_fused_raises_0\x1fx\x1fin_out_ptr0")
    handle = torch._C._aoti.unsafe_alloc_void_ptr_from_tensor(torch.ones(8))
    values = (ctypes.c_void_p * 1)(pointer(handle, None))
    trace = tmp_path / "t.msgpack"
    with tritontui.record(trace):
        launch(site, 0, values)
        # The kernel raised: the hook's second call never came, and the
        # graph call ended (graph_inputs drops what is unfinished).
        cpp_wrapper.drop_unfinished()
        torch.ones(3).add(1)
    torch._C._aoti.alloc_tensors_by_stealing_from_void_ptrs([handle])  # frees the handle
    records = dump(trace)
    gaps = [(g["what"], g["detail"]) for g in records if g["type"] == "gap"]
    assert gaps == [("launch", "cpp_fused_raises_0 (RuntimeError('the launch raised'))")]
    # The thread is no longer inside a launch: the eager op is recorded.
    assert "aten::add.Tensor" in [r["kernel"] for r in records if r["type"] == "launch"]


def _gpu_run(run_program, tmp_path: Path, name: str, mode: str, *flags: str) -> Path:
    trace = tmp_path / f"{name}.msgpack"
    run_program("gpu_cpp_wrapper.py", str(trace), mode, str(tmp_path / "model.pt2"), *flags)
    return trace


def _configs(records: list[dict]) -> dict[str, dict]:
    """Each Triton kernel's config, by name (a kernel written again after
    tuning keeps its last)."""
    return {r["name"]: r["config"] for r in records if r["type"] == "kernel"}


def _launcher_grid(launch: dict, config: dict) -> list[int]:
    """The grid Inductor's Python launcher gives a kernel of one
    dimension (``xnumel`` over ``XBLOCK``) for ``config``."""
    assert set(config) & {"YBLOCK", "ZBLOCK"} == set(), config
    xnumel = next(a["value"] for a in launch["args"] if a["name"] == "xnumel")
    return [-(-xnumel // config["XBLOCK"]), 1, 1]


@pytest.mark.gpu
def test_a_gpu_cpp_wrapper_graph_records_what_the_python_wrapper_records(run_program, tmp_path):
    traces = {mode: _gpu_run(run_program, tmp_path, mode, mode) for mode in ("cpp", "python")}
    records = dump(traces["cpp"])
    program = [r for r in records if r["type"] == "launch" and not r["autotune"]]
    tuning = [r for r in records if r["type"] == "launch" and r["autotune"]]
    # The Triton kernels cpp_wrapper ran at compile time on example inputs
    # are autotuning launches, not the program's.
    assert {r["kernel"] for r in tuning} == {
        r["kernel"] for r in program if r["kernel"].startswith("triton_")
    }, [r["kernel"] for r in tuning]
    assert not [r for r in records if r["type"] == "gap"]
    python = [r for r in launches(traces["python"]) if not r["kernel"].startswith("empty_strided")]
    ours = [r for r in program if not r["kernel"].startswith("aten::empty_strided")]
    assert len(ours) == len(python), ([r["kernel"] for r in ours], [r["kernel"] for r in python])
    configs = {mode: _configs(dump(trace)) for mode, trace in traces.items()}
    for mine, theirs in zip(ours, python, strict=True):
        if theirs["kernel"].startswith("triton_"):
            assert mine["kernel"] == theirs["kernel"]
            assert arguments(mine) == arguments(theirs)
            assert mine["stream"] == theirs["stream"]
            config = configs["cpp"][mine["kernel"]]
            assert mine["grid"] == _launcher_grid(mine, config) != [], (mine["grid"], config)
            # Each run autotunes on its own and may keep another config.
            if config == configs["python"][theirs["kernel"]]:
                assert mine["grid"] == theirs["grid"], (mine["grid"], theirs["grid"])
        else:
            assert sorted(tensors(mine), key=str) == sorted(tensors(theirs), key=str)
    kernels = [r for r in records if r["type"] == "kernel" and r["backend"] == "triton"]
    assert all(k["config"].get("num_warps") for k in kernels), kernels
    assert all(k["source"] for k in kernels), kernels


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["cpp", "aoti"])
def test_a_gpu_cpp_wrapped_atomic_index_add_is_named(run_program, tmp_path, mode):
    a, b = (_gpu_run(run_program, tmp_path, run, mode, "--index-add") for run in "ab")
    status, report = diff(a, b)
    assert report["gaps"] == {"a": [], "b": []}, report["gaps"]
    if report["results"]["differ"]:
        assert status == 1, report
        first = report["first_divergence"]
        assert first["kernel"].startswith("triton_") and "index_add" in first["kernel"], first
        assert first["kind"] == "nondeterministic-kernel", first
    else:
        assert status == 0, report


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["cpp", "aoti"])
def test_a_deterministic_gpu_model_is_identical_under_a_cpp_wrapper(run_program, tmp_path, mode):
    a, b = (_gpu_run(run_program, tmp_path, run, mode) for run in "ab")
    status, report = diff(a, b)
    assert status == 0, report
    assert report["verdict"] == "identical", report["verdict"]
    assert len(launches(a)) >= 4


@pytest.mark.parametrize(
    ("grid_type", "config", "expected"),
    [
        ("Grid1D", {"XBLOCK": 128}, [8, 1, 1]),
        ("Grid2D", {"XBLOCK": 64, "YBLOCK": 4}, [16, 25, 1]),
        ("Grid2DWithYZOverflow", {"XBLOCK": 64, "YBLOCK": 4}, [16, 25, 1]),
    ],
)
def test_a_cpp_wrapped_triton_launch_computes_its_grid_as_the_launcher(grid_type, config, expected):
    from tritontui.hooks import cpp_wrapper

    params = {"inductor_meta": {"grid_type": grid_type}, "config": config}
    expressions = cpp_wrapper._grid_expressions(params)
    codes, names = "xinn", "in_out_ptr0,in_ptr0,xnumel,ynumel"
    site = f"triton\x1fkernel\x1f{codes}\x1f{names}".encode()
    buffer = ctypes.create_string_buffer(site)
    site = cpp_wrapper.Site.at(ctypes.addressof(buffer))
    grid = cpp_wrapper._Grid(expressions)
    assert grid.of(site, [1000, 100]) == expected
    assert grid.of(site, [1, 1]) == [1, 1, 1]


def test_a_grid_over_a_name_the_launch_does_not_pass_is_left_unknown():
    from tritontui.hooks import cpp_wrapper

    buffer = ctypes.create_string_buffer(b"triton\x1fkernel\x1fin\x1fin_ptr0,xnumel")
    site = cpp_wrapper._SITES[ctypes.addressof(buffer)] = cpp_wrapper.Site.at(
        ctypes.addressof(buffer)
    )
    cpp_wrapper._GRIDS[site.address] = cpp_wrapper._Grid(
        {"prefix": [], "axes": ["ynumel", "1", "1"]}
    )
    assert cpp_wrapper.grid(site.address, [64]) == []
    assert cpp_wrapper._GRIDS[site.address] is None

"""Recording real torch.compile programs on the CPU and comparing runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from conftest import VEC_ISA_CHECKED, diff, dump, launches, repro


def test_a_model_recorded_twice_is_identical(run_program, tmp_path: Path) -> None:
    run_program("train_step.py", "--out", "a.msgpack")
    run_program("train_step.py", "--out", "b.msgpack")
    status, report = diff(tmp_path / "a.msgpack", tmp_path / "b.msgpack")
    assert status == 0, report["first_divergence"]
    assert report["verdict"] == "identical"
    recorded = launches(tmp_path / "a.msgpack")
    kernels = {r["kernel"] for r in recorded}
    backends = {r["backend"] for r in recorded}
    assert backends >= {"cpp", "aten"}, backends
    assert any(k.startswith("cpp_fused_") for k in kernels)
    assert {"aten::addmm.out", "aten::mm.out"} & kernels, kernels
    # Forward and backward kernels were both recorded, every tensor hashed.
    assert any("backward" in k for k in kernels), kernels
    for launch in recorded:
        for arg in launch["args"]:
            if (
                "dtype" in arg
                and arg["shape"]
                and 0 not in arg["shape"]
                and not launch["kernel"].startswith(("aten::empty", "empty_strided"))
            ):
                assert arg["post"] is not None, (launch["kernel"], arg["name"])
    assert report["launches"]["a"] == len(recorded) >= 10


def test_a_changed_weight_is_a_divergent_input_from_the_graph_input(
    run_program, tmp_path: Path
) -> None:
    run_program("train_step.py", "--out", "a.msgpack")
    run_program("train_step.py", "--out", "b.msgpack", "--bump")
    status, report = diff(tmp_path / "a.msgpack", tmp_path / "b.msgpack")
    assert status == 1
    first = report["first_divergence"]
    assert first["kind"] == "divergent-input"
    assert first["producer"] is None
    name = re.search(r"graph input (\w+)", first["origin"]).group(1)
    # It is the first launch that reads that input's memory.
    records = dump(tmp_path / "a.msgpack")
    weight = next(r for r in records if r["type"] == "input" and r["name"] == name)
    readers = [
        r["seq"]
        for r in records
        if r["type"] == "launch"
        and any(a.get("ptr") == weight["ptr"] and a["access"] != "out" for a in r["args"])
    ]
    assert first["a_index"] == readers[0]
    # Everything downstream is propagated, not a root cause of its own.
    assert len(report["root_causes"]) == 1
    assert report["divergence_count"] > 3
    assert all(not d["root_cause"] for d in report["divergences"][1:])
    assert all(d["root"]["a_index"] == first["a_index"] for d in report["divergences"])


def test_recording_does_not_change_the_results(run_program, tmp_path: Path) -> None:
    # Inductor's checks of the CPU's vector ISAs made as a user's program
    # makes them: each a Python of its own, started inside the recording.
    run_program("train_step.py", "--result", "plain.bin", env=VEC_ISA_CHECKED)
    run_program(
        "train_step.py", "--result", "recorded.bin", "--out", "t.msgpack", env=VEC_ISA_CHECKED
    )
    plain = (tmp_path / "plain.bin").read_bytes()
    assert len(plain) > 1000
    assert (tmp_path / "recorded.bin").read_bytes() == plain


def test_a_scheduling_dependent_kernel_is_the_root_cause(run_program, tmp_path: Path) -> None:
    run_program("index_add.py", "run0.msgpack")
    # Atomic float adds from two threads: a pair of runs can agree by chance.
    for attempt in range(1, 6):
        run_program("index_add.py", f"run{attempt}.msgpack")
        status, report = diff(tmp_path / "run0.msgpack", tmp_path / f"run{attempt}.msgpack")
        if status == 1:
            break
    assert status == 1, "five runs of an atomic index_add all agreed bit for bit"
    first = report["first_divergence"]
    assert first["kind"] == "nondeterministic-kernel", first
    assert first["kernel"].startswith("cpp_fused") and "index_add" in first["kernel"]
    assert "atomic" in first["detail"]
    assert [d["kernel"] for d in report["root_causes"]] == [first["kernel"]]


def test_reading_uninitialized_memory_has_no_recorded_producer(run_program, tmp_path: Path) -> None:
    # The allocator usually, not always, reuses the block: try a few seeds.
    for seed in range(1, 9, 2):
        run_program("uninitialized.py", "a.msgpack", str(seed))
        run_program("uninitialized.py", "b.msgpack", str(seed + 1))
        status, report = diff(tmp_path / "a.msgpack", tmp_path / "b.msgpack")
        if status == 1:
            break
    assert status == 1, "four pairs of runs read the same bytes"
    first = report["first_divergence"]
    assert first["kind"] == "divergent-input"
    assert first["kernel"].startswith("cpp_fused")
    assert first["producer"] is None
    assert "uninitialized memory" in first["origin"] and "aten::empty" in first["origin"], first[
        "origin"
    ]
    assert first["root_cause"]


def test_the_triton_hook_records_inductor_launches(run_program, tmp_path: Path) -> None:
    run_program("triton_pointwise.py", "t.msgpack")
    records = dump(tmp_path / "t.msgpack")
    triton = [r for r in records if r["type"] == "launch" and r["backend"] == "triton"]
    assert len(triton) == 1, [r["kernel"] for r in records if r["type"] == "launch"]
    launch = triton[0]
    assert launch["kernel"].startswith("triton_poi_fused")
    names = [a["name"] for a in launch["args"]]
    assert names == ["in_ptr0", "in_ptr1", "out_ptr0", "xnumel"]
    kernel = next(r for r in records if r["type"] == "kernel" and r["name"] == launch["kernel"])
    block = kernel["config"]["XBLOCK"]
    assert launch["grid"] == [-(-1000 // block), 1, 1]
    assert [a["access"] for a in kernel["args"]] == ["in", "in", "out", "in"]
    assert kernel["source"] and kernel["source"].endswith(".py")
    out = launch["args"][2]
    assert out["written"] and out["pre"] != out["post"]
    # The interpreter's own tensor copies are not program launches; the
    # buffer the wrapper allocates for the output is.
    aten = [r["kernel"] for r in records if r["type"] == "launch" and r["backend"] == "aten"]
    assert aten == ["empty_strided_cpu"], aten


def test_user_triton_kernels_launched_eagerly_are_recorded(run_program, tmp_path: Path) -> None:
    run_program("user_triton.py", "t.msgpack")
    records = dump(tmp_path / "t.msgpack")
    recorded = [r for r in records if r["type"] == "launch"]
    assert [(r["kernel"], r["backend"]) for r in recorded] == [("scale_add", "user-triton")]
    launch = recorded[0]
    assert [a["name"] for a in launch["args"]] == ["x_ptr", "y_ptr", "out_ptr", "n"]
    assert launch["grid"] == [4, 1, 1]
    written = {a["name"]: a["written"] for a in launch["args"] if "dtype" in a}
    assert written == {"x_ptr": False, "y_ptr": False, "out_ptr": True}
    kernel = next(r for r in records if r["type"] == "kernel")
    assert kernel["config"] == {"ALPHA": 2.0, "BLOCK": 256}
    assert kernel["source"].endswith("user_triton.py")


def test_a_user_triton_kernel_is_reproduced_alone(run_program, tmp_path: Path) -> None:
    # Captured by name, rebuilt from its recorded function, grid and
    # constants, and run alone (through Triton's interpreter, as recorded).
    run_program("user_triton.py", "t.msgpack", env={"TRITONTUI_CAPTURE": "scale_add"})
    seq = next(r["seq"] for r in launches(tmp_path / "t.msgpack") if r["kernel"] == "scale_add")
    folder = tmp_path / "repro"
    alone = repro(tmp_path / "t.msgpack", seq, folder, 3)
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert "out_ptr: 1 distinct result; against run A: the same bits" in alone.stdout, alone.stdout
    # A kernel that cannot be built here is a refusal (exit 2), never taken
    # for nondeterminism (exit 1).
    (folder / "kernel.py").write_text("def scale_add(x):\n    return undefined_name\n")
    script = [sys.executable, str(folder / "repro.py"), "--runs", "3"]
    broken = subprocess.run(script, capture_output=True, text=True, timeout=300)
    assert broken.returncode == 2, broken.stdout + broken.stderr
    assert "scale_add" in broken.stderr, broken.stderr


def test_inductor_s_probe_of_a_dtype_s_size_is_not_the_program_s_work(
    run_program, tmp_path: Path
) -> None:
    # Recorded, it made a run served by Inductor's cache one launch longer
    # than a run that compiled (corpus pair gpu_graphed_index_add).
    trace = tmp_path / "t.msgpack"
    run_program("dtype_probe.py", str(trace))
    empties = [r for r in launches(trace) if r["kernel"].startswith("aten::empty")]
    assert [a["dtype"] for r in empties for a in r["args"] if a.get("dtype")] == ["float16"]

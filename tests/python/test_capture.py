"""Values captured by launch (record --capture): a selected launch's
tensors before and after it in a safetensors file beside the trace, named
by a `capture` record; `tritontui values` compares two runs' captures with
KernelDiff metrics and finds the element that differs."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import tritontui
from conftest import PROGRAMS, Tmux, binary, dump, repro, run_ok


def _read_safetensors(path: Path) -> dict[str, torch.Tensor]:
    """A safetensors file read by its documented layout (no package)."""
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    dtypes = {"F32": torch.float32, "I64": torch.int64}
    body = data[8 + length :]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        start, end = entry["data_offsets"]
        flat = torch.frombuffer(bytearray(body[start:end]), dtype=dtypes[entry["dtype"]])
        out[name] = flat.reshape(entry["shape"])
    return out


def _values(a: Path, b: Path, launch: int) -> tuple[int, dict, str]:
    as_json = subprocess.run(
        [binary(), "values", "--json", str(a), str(b), "--launch", str(launch)],
        capture_output=True,
        text=True,
    )
    text = subprocess.run(
        [binary(), "values", str(a), str(b), "--launch", str(launch)],
        capture_output=True,
        text=True,
    )
    assert as_json.returncode == text.returncode, (as_json.stderr, text.stderr)
    report = json.loads(as_json.stdout) if as_json.stdout else {}
    return as_json.returncode, report, text.stdout + text.stderr


def test_a_captured_launch_is_compared_value_by_value(run_program, tmp_path: Path) -> None:
    select = {"TRITONTUI_CAPTURE": "cpp_*,aten::mm,aten::add*"}
    run_program("capture.py", "a.msgpack", env=select)
    run_program("capture.py", "same.msgpack", env=select)
    run_program("capture.py", "b.msgpack", env={**select, "BUMP": "1"})
    records = dump(tmp_path / "a.msgpack")
    assert records[0]["version"] >= [1, 9]
    launches = {r["seq"]: r for r in records if r["type"] == "launch"}
    captures = [r for r in records if r["type"] == "capture"]
    kernels = [launches[c["seq"]]["kernel"] for c in captures]
    assert len(captures) == 3 and kernels[0].startswith("cpp_fused"), kernels
    assert kernels[1:] == ["aten::mm", "aten::add.Tensor"], kernels
    # The file holds what the launch read before it and wrote after it.
    kernel_seq, mm_seq, add_seq = (c["seq"] for c in captures)
    files = {c["seq"]: tmp_path / c["file"] for c in captures}
    saved = _read_safetensors(files[kernel_seq])
    torch.manual_seed(0)
    x = torch.randn(64, 32)
    args = launches[kernel_seq]["args"]
    read = next(i for i, a in enumerate(args) if a.get("access") == "in" and "dtype" in a)
    written = next(i for i, a in enumerate(args) if a.get("written"))
    assert torch.equal(saved[f"{read}.pre"], x)
    torch.testing.assert_close(saved[f"{written}.post"], (x * 2).sin())
    assert f"{written}.pre" not in saved  # a pure output's old bytes mean nothing
    # Each captured value hashes as the launch record says, bit for bit.
    for name, value in saved.items():
        index, when = name.split(".")
        assert int(args[int(index)][when], 16) == tritontui.hash_tensor(value), name
    # The product, a new tensor the op returned, is captured after it.
    mm = _read_safetensors(files[mm_seq])
    result = len(launches[mm_seq]["args"]) - 1
    assert launches[mm_seq]["args"][result]["name"] == "result"
    product = mm[f"{result}.post"]
    assert int(launches[mm_seq]["args"][result]["post"], 16) == tritontui.hash_tensor(product)
    # A result follows every argument, the scalar alpha too.
    add_args = launches[add_seq]["args"]
    assert [a["name"] for a in add_args] == ["self", "other", "alpha", "result"], add_args
    added = _read_safetensors(files[add_seq])
    assert sorted(added) == ["0.post", "0.pre", "1.post", "1.pre", "3.post"], sorted(added)
    assert int(add_args[3]["post"], 16) == tritontui.hash_tensor(added["3.post"])

    # Equal runs: every captured tensor holds the same bits.
    status, report, text = _values(tmp_path / "a.msgpack", tmp_path / "same.msgpack", kernel_seq)
    assert status == 0, text
    assert all(t["metrics"]["mismatched"] == 0 for t in report["tensors"]), report
    assert "the same bits in both runs" in text

    # One input element bumped: it and the kernel's output there differ.
    status, report, text = _values(tmp_path / "a.msgpack", tmp_path / "b.msgpack", kernel_seq)
    assert status == 1, text
    by_when = {(t["index"], t["when"]): t["metrics"] for t in report["tensors"]}
    before = by_when[(read, "before")]
    assert (before["mismatched"], before["elements"]) == (1, 64 * 32), before
    assert before["worst"]["index"] == [5, 7]
    assert abs(before["max_abs"] - 1.0) < 1e-6 and before["max_ulp"] > 0
    after = by_when[(written, "after")]
    assert after["mismatched"] == 1 and after["worst"]["index"] == [5, 7], after
    assert after["worst"]["a"] == float(saved[f"{written}.post"][5, 7])
    assert "the runs' values differ" in text and "[5, 7]" in text, text
    # The product differs in row 5 and column 5.
    status, report, _ = _values(tmp_path / "a.msgpack", tmp_path / "b.msgpack", mm_seq)
    product = next(t for t in report["tensors"] if t["name"] == "result")["metrics"]
    assert status == 1 and product["mismatched"] >= 64, product

    # The diff carries them too, with the divergence of that launch.
    differ = subprocess.run(
        [binary(), "diff", "--json", tmp_path / "a.msgpack", tmp_path / "b.msgpack"],
        capture_output=True,
        text=True,
    )
    entry = next(d for d in json.loads(differ.stdout)["divergences"] if d["a_index"] == kernel_seq)
    compared = {(t["index"], t["when"]): t["metrics"] for t in entry["values"]}
    assert compared[(written, "after")]["worst"]["index"] == [5, 7], entry
    summary = subprocess.run(
        [binary(), "diff", tmp_path / "a.msgpack", tmp_path / "b.msgpack"],
        capture_output=True,
        text=True,
    ).stdout
    assert "  values: " in summary and "worst [5, 7]" in summary, summary

    # So does the HTML report, with a heat map of where they differ.
    page = tmp_path / "report.html"
    run_ok(
        [binary(), "report", "a.msgpack", "b.msgpack", "-o", str(page)], tmp_path, dict(os.environ)
    )
    html = page.read_text()
    assert '<svg class="heat"' in html and "[5, 7]" in html and "max ULP" in html

    # The UI shows them in the detail of that launch, with where they differ.
    if shutil.which("tmux"):
        with Tmux(f"{binary()} {tmp_path / 'a.msgpack'} {tmp_path / 'b.msgpack'}") as tmux:
            screen = tmux.wait_for("worst [5, 7]", timeout=60)
            assert "values" in screen and "░" in screen, screen
            tmux.send("q")
            tmux.wait_for("EXIT=")

    # A deterministic kernel, and an aten op with a scalar, reproduced alone:
    # the same bits in every repetition and as recorded.
    for seq in (kernel_seq, add_seq):
        folder = tmp_path / f"repro{seq}"
        run_ok(
            [binary(), "repro", "a.msgpack", "--launch", str(seq), "-o", str(folder)],
            tmp_path,
            dict(os.environ),
        )
        script = [sys.executable, str(folder / "repro.py"), "--runs", "3"]
        alone = subprocess.run(script, capture_output=True, text=True)
        assert alone.returncode == 0, alone.stdout + alone.stderr
        assert "1 distinct result; against run A: the same bits" in alone.stdout, alone.stdout
    # A script recorded with another torch refuses to run.
    launch_json = folder / "launch.json"
    launch_json.write_text(launch_json.read_text().replace(torch.__version__, "0.0.1"))
    refused = subprocess.run(script, capture_output=True, text=True)
    assert refused.returncode == 2 and "recorded with torch 0.0.1" in refused.stderr, refused

    # A launch that was not captured is an error naming the trace.
    status, _, text = _values(tmp_path / "a.msgpack", tmp_path / "b.msgpack", mm_seq + 1000)
    assert status == 2 and "a.msgpack: no launch" in text, text
    not_captured = next(s for s in launches if s not in (kernel_seq, mm_seq))
    status, _, text = _values(tmp_path / "a.msgpack", tmp_path / "b.msgpack", not_captured)
    assert status == 2 and f"launch {not_captured} was not captured" in text, text
    # A sidecar file cut short is refused, naming it.
    files[kernel_seq].write_bytes(files[kernel_seq].read_bytes()[:20])
    status, _, text = _values(tmp_path / "a.msgpack", tmp_path / "b.msgpack", kernel_seq)
    assert status == 2 and "safetensors" in text and text.count("\n") <= 2, text


def test_captures_stop_at_their_budget_with_a_warning(run_program, tmp_path: Path) -> None:
    proc = run_program(
        "capture.py",
        "t.msgpack",
        env={"TRITONTUI_CAPTURE": "cpp_*,aten::mm", "TRITONTUI_CAPTURE_BUDGET": "100"},
    )
    assert "captured values reached their budget" in proc.stderr, proc.stderr
    records = dump(tmp_path / "t.msgpack")
    assert not [r for r in records if r["type"] == "capture"]
    assert any(r["type"] == "launch" for r in records)


def test_the_cli_passes_capture_and_a_hash_function_to_the_program(
    tmp_path: Path, inductor_cache: Path
) -> None:
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache)}
    env.pop("TRITONTUI_CAPTURE", None)
    command = [binary(), "record", "-o", "t.msgpack", "--capture", "aten::mm"]
    command += ["--hash-fn", "norm", "--"]
    run_ok([*command, sys.executable, str(PROGRAMS / "capture.py")], tmp_path, env)
    records = dump(tmp_path / "t.msgpack")
    (capture,) = [r for r in records if r["type"] == "capture"]
    (mm,) = [r for r in records if r["type"] == "launch" and r["kernel"] == "aten::mm"]
    assert capture["seq"] == mm["seq"] and (tmp_path / capture["file"]).exists()
    # Both observed the same launch: the norm of what was captured.
    values = _read_safetensors(tmp_path / capture["file"])
    result = mm["args"][-1]
    assert result["custom_hash"]["fn"] == "norm", result
    assert result["custom_hash"]["post"] == pytest.approx(
        values[f"{len(mm['args']) - 1}.post"].double().abs().sum().item(), rel=1e-9
    )


@pytest.mark.gpu
def test_a_gpu_launch_is_captured_without_waiting(run_program, tmp_path: Path) -> None:
    """On a GPU the copies go to pinned memory on the launch's stream; what
    they hold hashes as the device hashed it."""
    select = {"TRITONTUI_CAPTURE": "triton_*,aten::mm", "DEVICE": "cuda"}
    run_program("capture.py", "a.msgpack", env=select)
    run_program("capture.py", "b.msgpack", env={**select, "BUMP": "1"})
    records = dump(tmp_path / "a.msgpack")
    launches = {r["seq"]: r for r in records if r["type"] == "launch"}
    captures = [r for r in records if r["type"] == "capture"]
    kernels = [launches[c["seq"]]["kernel"] for c in captures]
    assert len(captures) == 2 and kernels[0].startswith("triton_"), kernels
    for capture in captures:
        args = launches[capture["seq"]]["args"]
        for name, value in _read_safetensors(tmp_path / capture["file"]).items():
            index, when = name.split(".")
            assert int(args[int(index)][when], 16) == tritontui.hash_tensor(value), name
    status, report, text = _values(
        tmp_path / "a.msgpack", tmp_path / "b.msgpack", captures[0]["seq"]
    )
    assert status == 1, text
    # What the kernel read, and everything after it, differs at the bumped
    # element alone (before it, its output buffer holds stale bytes).
    worst = [
        t["metrics"]["worst"]
        for t in report["tensors"]
        if t["metrics"]["mismatched"] and (t["when"] == "after" or t["name"].startswith("in_"))
    ]
    assert len(worst) >= 2 and all(w["index"] == [5, 7] for w in worst), report
    # A deterministic Triton kernel, rerun alone: the same bits each time,
    # and those run A recorded.
    alone = _repro(tmp_path, tmp_path / "a.msgpack", captures[0]["seq"], dict(os.environ))
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert "1 distinct result; against run A: the same bits" in alone.stdout, alone.stdout


@pytest.mark.gpu
def test_check_escalates_to_the_values_of_an_atomic_triton_kernel(
    tmp_path: Path, inductor_cache: Path
) -> None:
    """`check` finds Inductor's atomic index_add, then captures its values in
    two more runs and prints how they differ."""
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache)}
    command = [binary(), "check", "-n", "3", "--json", "--dir", str(tmp_path / "runs"), "--"]
    proc = subprocess.run(
        [*command, sys.executable, str(PROGRAMS / "gpu_scatter.py")],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    verdict = json.loads(proc.stdout)
    escalated = verdict["values"]
    assert escalated["values"]["kernel"].startswith("triton_"), escalated
    written = [t for t in escalated["values"]["tensors"] if t["when"] == "after"]
    assert written and all(t["metrics"] for t in written), written
    if escalated["note"] is None:
        differ = [t["metrics"] for t in written if t["metrics"]["mismatched"]]
        assert differ and all(m["worst"] and m["max_ulp"] > 0 for m in differ), written
    # The Triton kernel alone, rerun from its captured inputs with its
    # recorded source and config, is nondeterministic.
    alone = _repro(tmp_path, Path(escalated["traces"][0]), escalated["launches"][0], env)
    assert alone.returncode == 1, alone.stdout + alone.stderr
    assert "the kernel alone is nondeterministic" in alone.stdout, alone.stdout


def _repro(tmp_path: Path, trace: Path, seq: int, env: dict) -> subprocess.CompletedProcess:
    """`tritontui repro` of launch ``seq`` of ``trace``, then its script run
    ten times."""
    return repro(trace, seq, tmp_path / f"repro{seq}", 10, env)

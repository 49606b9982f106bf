"""The one-command determinism check and its Python API, on CPU programs:
a deterministic one passes, an atomic index_add is caught and named."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import tritontui
from conftest import PROGRAMS, Tmux, binary, check, repro

# Atomic float adds from two threads: a few runs can agree by chance.
RUNS = "6"


def test_a_deterministic_program_passes(tmp_path: Path, inductor_cache: Path) -> None:
    proc = check(tmp_path, inductor_cache, "pausable.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("deterministic: 2 runs"), proc.stdout
    assert "run 1/2" in proc.stderr and "run 2/2 done" in proc.stderr
    # The program's own output goes to stderr; stdout is the verdict only.
    assert "done" in proc.stderr and "done" not in proc.stdout.replace("deterministic", "")
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [
        "run0.msgpack",
        "run1.msgpack",
    ]


def test_an_atomic_index_add_is_caught_and_named(tmp_path: Path, inductor_cache: Path) -> None:
    proc = check(tmp_path, inductor_cache, "scatter.py", "-n", RUNS, "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    verdict = json.loads(proc.stdout)
    assert verdict["verdict"] == "nondeterministic"
    divergent = [
        c["report"] for c in verdict["comparisons"] if c["report"]["verdict"] == "divergent"
    ]
    first = divergent[0]["first_divergence"]
    assert first["kind"] == "nondeterministic-kernel", first
    assert first["kernel"].startswith("cpp_fused") and "index_add" in first["kernel"]
    # Escalated to values: two more runs captured that launch.
    escalated = verdict["values"]
    assert escalated["launches"][0] == first["a_index"], escalated
    assert "capturing launch" in proc.stderr and "run 2/2" in proc.stderr
    values = escalated["values"]
    assert values["kernel"] == first["kernel"], values
    written = [t for t in values["tensors"] if t["when"] == "after" and t["metrics"]]
    assert written, values
    if escalated["note"] is None:  # the atomics added in another order again
        differ = [t["metrics"] for t in written if t["metrics"]["mismatched"]]
        assert differ and all(m["worst"] and m["max_ulp"] > 0 for m in differ), written
    else:
        assert "did not show again" in escalated["note"], escalated
    # check reran the kernel alone on its captured inputs: confirmed.
    rerun = escalated["rerun"]
    assert rerun["confirmed"] is True, rerun
    assert rerun["words"].startswith("confirmed: 10 reruns of the kernel alone"), rerun
    assert rerun["distinct"] > 1, rerun
    # The kernel alone, rerun from its captured inputs, is nondeterministic.
    trace = Path(escalated["traces"][0])
    env = {**os.environ, "OMP_NUM_THREADS": "2"}
    alone = repro(trace, first["a_index"], tmp_path / "repro", 10, env)
    assert alone.returncode == 1, alone.stdout + alone.stderr
    assert "the kernel alone is nondeterministic" in alone.stdout, alone.stdout
    # The plain summary names it too, and what the values say.
    proc = check(tmp_path, inductor_cache, "scatter.py", "-n", RUNS)
    assert proc.returncode == 1 and first["kernel"] in proc.stdout, proc.stdout
    assert "values: two more runs captured launch" in proc.stdout, proc.stdout
    assert "max ulp" in proc.stdout, proc.stdout
    assert "rerun alone: confirmed: 10 reruns" in proc.stdout, proc.stdout


def test_a_failing_program_is_an_error(tmp_path: Path, inductor_cache: Path) -> None:
    failing = tmp_path / "fail.py"
    failing.write_text("raise SystemExit(3)\n")
    proc = check(tmp_path, inductor_cache, failing)
    assert proc.returncode == 2 and "run 1 of" in proc.stderr and "failed" in proc.stderr


def scatter(src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    return torch.zeros(64).index_add(0, index, src) * 2


def test_assert_deterministic_passes_a_deterministic_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With nothing configured, the comparison runs the package's own command.
    monkeypatch.delenv("TRITONTUI_BIN", raising=False)
    monkeypatch.setenv("PATH", os.defpath)
    f = torch.compile(lambda x: (x * 2).relu().sum(0) + 1)
    report = tritontui.assert_deterministic(f, torch.randn(64, 8), runs=3, dir=tmp_path)
    assert report.deterministic and len(report.traces) == 3
    assert "deterministic: 3 runs" in str(report)


def test_the_package_installs_the_tritontui_command() -> None:
    demo = Path(__file__).resolve().parents[2] / "assets" / "demo"
    module = [sys.executable, "-m", "tritontui"]
    script = Path(sys.executable).parent / "tritontui"
    for command in (module, [str(script)]):
        compared = subprocess.run(
            [*command, "diff", str(demo / "run0.msgpack"), str(demo / "run1.msgpack")],
            capture_output=True,
            text=True,
        )
        assert compared.returncode == 1, compared.stderr
        assert compared.stdout.count("root cause") >= 1, compared.stdout
    bad = subprocess.run([*module, "diff", "nonexistent.msgpack", "x"], capture_output=True)
    assert bad.returncode == 2 and b"nonexistent.msgpack: cannot read" in bad.stderr


def test_assert_deterministic_names_the_kernel_argument_and_kind(tmp_path: Path) -> None:
    torch.set_num_threads(2)
    torch.manual_seed(0)
    src, index = torch.randn(1 << 21), torch.randint(0, 64, (1 << 21,))
    with pytest.raises(AssertionError) as caught:
        tritontui.assert_deterministic(
            torch.compile(scatter), src, index, runs=int(RUNS), dir=tmp_path
        )
    message = str(caught.value)
    assert "nondeterministic-kernel" in message, message
    assert "cpp_fused" in message and "index_add" in message, message
    assert "argument out_ptr0" in message, message


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_on_a_terminal_check_opens_the_ui_at_the_first_divergence(
    tmp_path: Path, inductor_cache: Path
) -> None:
    command = (
        f"TORCHINDUCTOR_CACHE_DIR={inductor_cache} {binary()} check -n {RUNS} "
        f"--dir {tmp_path / 'runs'} -- {sys.executable} {PROGRAMS / 'scatter.py'}"
    )
    with Tmux(command) as tmux:
        screen = tmux.wait_for("first divergence selected", timeout=600)
        assert "nondeterministic" in screen and "index_add" in screen, screen
        tmux.send("q")
        assert "EXIT=1" in tmux.wait_for("EXIT=")

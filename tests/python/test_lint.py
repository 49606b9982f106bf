"""`tritontui lint`: recorded launches checked against constraint profiles."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import torch
import tritontui
from conftest import binary


def lint(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([binary(), "lint", *map(str, args)], capture_output=True, text=True)


def test_lint_finds_a_float64_tensor_and_a_misaligned_view(tmp_path: Path) -> None:
    trace = tmp_path / "t.msgpack"
    x = torch.arange(64, dtype=torch.float32)
    f = torch.compile(lambda t: t * 2 + 1)
    with tritontui.record(trace):
        f(x)  # aligned, 256-byte rows: clean
        x[1:17] * 3  # a view one float past the start: misaligned
        x.double().sum()  # float64
    profile = tmp_path / "target.toml"
    profile.write_text(
        'description = "a target without float64"\n'
        "[tensors]\n"
        'deny_dtypes = ["float64"]\n'
        "align_bytes = 16\n"
    )
    proc = lint(trace, "--profile", profile, "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    found = {(v["kernel"], v["arg"], v["rule"]) for v in report["violations"]}
    assert ("aten::mul.Tensor", "self", "tensors.align_bytes") in found, found
    assert ("aten::sum", "self", "tensors.deny_dtypes") in found, found
    assert not [v for v in report["violations"] if v["kernel"].startswith("cpp_")], report
    # The summary: one line per violation, then the count.
    text = lint(trace, "--profile", profile).stdout.splitlines()
    assert any("aten::sum self: tensors.deny_dtypes: float64 is denied" in t for t in text), text
    assert text[-1].endswith(f"{len(report['violations'])} violations"), text
    # The shipped float64 profile is about GPUs: a CPU trace passes it.
    assert lint(trace, "--profile", "no-float64-on-gpu").returncode == 0


def test_a_bad_profile_is_one_clear_error(tmp_path: Path) -> None:
    trace = tmp_path / "t.msgpack"
    with tritontui.record(trace):
        torch.ones(4) * 2
    profile = tmp_path / "typo.toml"
    profile.write_text("[tensors]\nalign_byte = 16\n")
    proc = lint(trace, "--profile", profile)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"tritontui: {profile}: unknown rule tensors.align_byte"
    missing = lint(trace, "--profile", tmp_path / "none.toml")
    assert missing.returncode == 2 and "none.toml: cannot read" in missing.stderr

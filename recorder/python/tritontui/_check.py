"""Determinism checks from Python: run a function several times, each run
recorded, and compare every run with the first (through the ``tritontui``
binary's ``diff --json``, docs/diff-json.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _environment


@dataclass
class DeterminismReport:
    """What :func:`check_determinism` found."""

    deterministic: bool
    """Every run gave the same results bit for bit (``diff`` said
    ``identical`` or ``benign`` of each); never true of a run whose
    comparison was ``inconclusive``."""
    traces: list[Path]
    """One trace per run, ``run0.msgpack`` first."""
    first_divergence: dict[str, Any] | None = None
    """The first divergence of the first run that differs from run 0."""
    root_causes: list[dict[str, Any]] = field(default_factory=list)
    """Its root causes (docs/diff-json.md's *divergence* objects)."""
    divergent_run: int | None = None
    """The first run that differs from run 0."""
    reports: list[dict[str, Any]] = field(default_factory=list)
    """``diff --json`` of each run after the first against run 0."""
    benign_runs: list[int] = field(default_factory=list)
    """Runs whose launches differ from run 0's while their results agree
    bit for bit: every difference was absorbed on the way."""
    inconclusive_runs: list[int] = field(default_factory=list)
    """Runs whose comparison with run 0 saw no difference in the results
    while a trace did not see everything (``diff`` said ``inconclusive``:
    recording stopped, graphs ran unrecorded, ...)."""
    gaps: list[str] = field(default_factory=list)
    """What those comparisons' traces did not see, in words."""

    def __str__(self) -> str:
        runs = len(self.traces)
        if self.divergent_run is None and self.inconclusive_runs:
            return "\n".join(
                [
                    f"inconclusive: nothing recorded in {runs} runs differs in the results, "
                    "but the traces did not see everything:"
                ]
                + [f"  {gap}" for gap in self.gaps]
            )
        if self.deterministic and self.benign_runs:
            return (
                f"deterministic results: {runs} runs gave the same results bit for bit; "
                f"runs {', '.join(map(str, self.benign_runs))} differed on the way (benign: "
                "every difference was absorbed before the results)"
            )
        if self.deterministic:
            return f"deterministic: {runs} runs recorded the same launches with the same bits"
        first = self.first_divergence or {}
        lines = [
            f"nondeterministic: run {self.divergent_run} differs from run 0 "
            f"({self.traces[0]} vs {self.traces[self.divergent_run or 0]})",
            f"first divergence: {_launch_words(first)}",
        ]
        lines += [f"root cause: {_launch_words(d)}" for d in self.root_causes]
        return "\n".join(lines)


def _launch_words(d: dict[str, Any]) -> str:
    """``triton_poi_fused_add_0 (A#3 B#3) nondeterministic-kernel, out_ptr0: ...``"""
    where = f"A#{d.get('a_index')} B#{d.get('b_index')}"
    args = ", ".join(d.get("args") or [])
    return (
        f"{d.get('kernel')} ({where}) {d.get('kind')}"
        + (f", argument {args}" if args else "")
        + f": {d.get('detail')}"
    )


def command() -> list[str]:
    """The ``tritontui`` command: ``$TRITONTUI_BIN`` when set (a binary
    built with cargo, say), else this package's own, run by this Python."""
    found = _environment.tritontui_binary()
    return [found] if found else [sys.executable, "-m", "tritontui"]


def check_determinism(
    fn: Any,
    *args: Any,
    runs: int = 2,
    dir: str | os.PathLike[str] | None = None,
    reset: bool = False,
    record_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> DeterminismReport:
    """Calls ``fn(*args, **kwargs)`` ``runs`` times in this process, each
    call recorded, and compares every run with the first.

    Each run gets fresh clones of the tensors in ``args`` and ``kwargs``,
    so a function that writes its inputs sees the same values every time.
    ``reset=True`` calls ``torch._dynamo.reset()`` before each run, so each
    one compiles (and autotunes) anew. Traces go to ``dir`` (a new temporary
    directory by default). ``record_options`` are passed to
    :func:`tritontui.record`."""
    import torch
    from torch.utils._pytree import tree_map

    from ._recording import record

    if runs < 2:
        raise ValueError(f"runs must be at least 2, not {runs}")
    out = Path(dir) if dir is not None else Path(tempfile.mkdtemp(prefix="tritontui-check-"))
    out.mkdir(parents=True, exist_ok=True)

    def fresh(value: Any) -> Any:
        return value.detach().clone() if isinstance(value, torch.Tensor) else value

    pristine = tree_map(fresh, (args, kwargs))
    traces = []
    for i in range(runs):
        if reset:
            torch._dynamo.reset()
        call_args, call_kwargs = tree_map(fresh, pristine)
        trace = out / f"run{i}.msgpack"
        with record(trace, **(record_options or {})):
            # Held until recording stops: what fn returns is among the
            # results the comparison follows differences to.
            returned = fn(*call_args, **call_kwargs)
            if torch.cuda.is_available():
                torch.cuda.synchronize()
        del returned
        traces.append(trace)
    report = DeterminismReport(deterministic=True, traces=traces)
    for i, trace in enumerate(traces[1:], start=1):
        compared = diff_json(traces[0], trace)
        report.reports.append(compared)
        if compared["verdict"] == "benign":
            report.benign_runs.append(i)
        if compared["verdict"] == "inconclusive":
            report.deterministic = False
            report.inconclusive_runs.append(i)
            for run in ("a", "b"):
                for gap in compared["gaps"][run]:
                    said = f"{gap['detail']} (run {0 if run == 'a' else i})"
                    if said not in report.gaps:
                        report.gaps.append(said)
        if compared["verdict"] == "divergent" and report.divergent_run is None:
            report.deterministic = False
            report.divergent_run = i
            report.first_divergence = compared["first_divergence"]
            report.root_causes = compared["root_causes"]
    return report


def diff_json(a: Path, b: Path, flags: list[str] | None = None) -> dict[str, Any]:
    """``tritontui diff --json [flags] A B``, parsed."""
    proc = subprocess.run(
        [*command(), "diff", "--json", *(flags or []), str(a), str(b)],
        capture_output=True,
        text=True,
        check=False,
    )
    # 0 agree, 1 divergent, 3 inconclusive; 2 is an error.
    if proc.returncode not in (0, 1, 3):
        raise RuntimeError(f"tritontui diff failed: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def assert_deterministic(fn: Any, *args: Any, **kwargs: Any) -> DeterminismReport:
    """:func:`check_determinism`, raising ``AssertionError`` when the runs
    differ, or when a comparison is inconclusive (its traces did not see
    everything); the message names the kernel, the argument and the
    classification of the first divergence and of its root causes, or
    what was not seen."""
    report = check_determinism(fn, *args, **kwargs)
    if not report.deterministic:
        raise AssertionError(str(report))
    return report

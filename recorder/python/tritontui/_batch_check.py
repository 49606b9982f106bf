"""Batch invariance checks from Python: one request run alone and inside
batches of other sizes, each run recorded with row hashes (``rows``), and
each batched run compared with the run alone by the request's rows
(``tritontui diff --json``'s ``batch``, docs/diff-json.md): the first
kernel that makes the request's bits depend on what it was batched with."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._check import diff_json


@dataclass
class BatchCase:
    """One batched run of the request."""

    size: int
    """Requests in the batch."""
    position: int
    """The request's index in it."""
    trace: Path
    """Its trace."""
    equal: bool
    """The request's output equals its output alone, bit for bit."""
    report: dict[str, Any]
    """``diff --json`` of the run alone against this one."""

    @property
    def first_variant(self) -> dict[str, Any] | None:
        """The first batch-variant launch (``batch.first_variant``)."""
        return (self.report.get("batch") or {}).get("first_variant")


@dataclass
class BatchInvarianceReport:
    """What :func:`check_batch_invariance` found."""

    invariant: bool
    """In every batch the request's output equals its output alone, bit
    for bit."""
    alone: Path
    """The trace of the request alone."""
    cases: list[BatchCase] = field(default_factory=list)
    """Each batched run, in the order run."""

    @property
    def first_varying(self) -> BatchCase | None:
        """The first batched run whose request output differs."""
        return next((case for case in self.cases if not case.equal), None)

    def __str__(self) -> str:
        case = self.first_varying
        if case is None:
            sizes = ", ".join(f"{c.size} (at {c.position})" for c in self.cases)
            return (
                f"batch invariant: the request's output is the same alone and in batches of {sizes}"
            )
        lines = [
            f"batch-variant: the request's output differs alone and at {case.position} "
            f"of a batch of {case.size} ({self.alone} vs {case.trace})"
        ]
        variant = case.first_variant
        if variant is None:
            # What the comparison says instead: launches it could not
            # judge, or rows that already differed in what one read.
            said = (case.report.get("batch") or {}).get("detail", [])
            lines.append("no launch was found to make it differ:")
            lines.extend(f"  {line}" for line in said[1:])
        else:
            detail = next(
                (
                    d.get("detail", "")
                    for d in case.report.get("root_causes", [])
                    if d.get("kind") == "batch-variant"
                ),
                "",
            )
            lines.append(
                f"first batch-variant kernel: {variant['kernel']} "
                f"(A#{variant['a_index']} B#{variant['b_index']}): {detail}"
            )
        return "\n".join(lines)


def check_batch_invariance(
    fn: Any,
    x: Any,
    sizes: tuple[int, ...] = (1, 8, 64),
    positions: tuple[int, ...] = (0, -1),
    dir: str | os.PathLike[str] | None = None,
    record_options: dict[str, Any] | None = None,
) -> BatchInvarianceReport:
    """Calls ``fn`` on the request ``x`` alone, then on batches of each of
    ``sizes`` that hold ``x`` at each of ``positions`` (the other requests
    drawn at random like ``x``, along its first dimension: a request of
    ``[1, T, D]`` or of ``[T, D]`` rows), each call recorded with row
    hashes into ``dir`` (a new temporary directory by default), and
    compares the request's output in each batch with its output alone,
    bit for bit, and each batched run with the run alone by the request's
    rows. ``record_options`` are passed to :func:`tritontui.record`."""
    import torch

    from ._recording import record

    out = Path(dir) if dir is not None else Path(tempfile.mkdtemp(prefix="tritontui-batch-"))
    out.mkdir(parents=True, exist_ok=True)
    options = {**(record_options or {}), "rows": True}

    def run(inputs: Any, trace: Path) -> Any:
        with record(trace, **options):
            returned = fn(inputs)
            if torch.cuda.is_available():
                torch.cuda.synchronize()
        return returned

    alone_trace = out / "alone.msgpack"
    alone = run(x.clone(), alone_trace).detach().clone()
    report = BatchInvarianceReport(invariant=True, alone=alone_trace)
    others = torch.Generator(device="cpu").manual_seed(0)
    for size in sizes:
        for position in sorted({p % size for p in positions}):
            if size == 1:
                continue
            parts = [_like(x, others) for _ in range(size)]
            parts[position] = x.clone()
            trace = out / f"batch{size}_at{position}.msgpack"
            output = run(torch.cat(parts), trace)
            # The request's output: as many rows as its output alone.
            own = alone.shape[0]
            rows = output[position * own : (position + 1) * own]
            equal = rows.shape == alone.shape and torch.equal(rows, alone)
            compared = diff_json(
                alone_trace,
                trace,
                ["--batch", "A:1", f"B:{size}", "--request", "A:0", f"B:{position}"],
            )
            report.cases.append(BatchCase(size, position, trace, equal, compared))
            report.invariant = report.invariant and equal
    return report


def _like(x: Any, generator: Any) -> Any:
    """Another request like ``x``: random values of its shape and dtype."""
    import torch

    if x.is_floating_point():
        return torch.randn(x.shape, generator=generator).to(x.dtype).to(x.device)
    high = int(x.max().item()) + 1 if x.numel() else 1
    return torch.randint(0, high, x.shape, generator=generator).to(x.dtype).to(x.device)


def assert_batch_invariant(fn: Any, x: Any, **kwargs: Any) -> BatchInvarianceReport:
    """:func:`check_batch_invariance`, raising ``AssertionError`` when the
    request's output differs in some batch; the message names the first
    batch-variant kernel, its grids and the shapes each run called it with."""
    report = check_batch_invariance(fn, x, **kwargs)
    if not report.invariant:
        raise AssertionError(str(report))
    return report

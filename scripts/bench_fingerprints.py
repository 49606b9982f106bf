"""The host time the fingerprint mode's own work takes a step, for one
build or several side by side: its graph calls' fingerprints, the lookup
of what their outputs hold for a backward, the walk that finds a step's
state and its fingerprint (``tritontui._fingerprints.graph_call``,
``reaching_the_program``, ``_results.TrainingState.tensors`` and
``_fingerprints.state``, each call timed), and the host reads' calls
(``Tensor.item`` as recording hooks it, the read's own time in it), on
the GPU benchmark's bf16 transformer step where CUDA is there, else on
the CPU GPT training step. A step's wall time on these hosts drifts by
more than this work costs; the work's own time does not.

    python scripts/bench_fingerprints.py [SITE ...] [--times 2] [--steps 100]

With no SITE it measures the build this Python imports; with SITEs (each a
directory holding an installed ``tritontui``, put first on
``PYTHONPATH``: ``pip install --target SITE --no-deps WHEEL``) each build
in processes of its own, the builds alternating ``--times`` times, then
each later build's time beside the first's.
"""

from __future__ import annotations

import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _builds


def one_build(steps: int) -> None:
    """Prints this build's fingerprint work a step, in microseconds."""
    import torch
    import tritontui
    from tritontui import _fingerprints, _results

    name, step, sync = _builds.training_step()
    spent: dict[str, list[int]] = {
        "graph calls": [],
        "saved lookup": [],
        "state walk": [],
        "step state": [],
        "item calls": [],
    }

    def timed(part: str, work: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any) -> Any:
            start = time.perf_counter_ns()
            try:
                return work(*args)
            finally:
                spent[part].append(time.perf_counter_ns() - start)

        return run

    _fingerprints.graph_call = timed("graph calls", _fingerprints.graph_call)
    _fingerprints.reaching_the_program = timed("saved lookup", _fingerprints.reaching_the_program)
    training = _results.TrainingState
    training.tensors = timed("state walk", training.tensors)
    _fingerprints.state = timed("step state", _fingerprints.state)
    with (
        tempfile.TemporaryDirectory() as tmp,
        tritontui.record(os.path.join(tmp, "t.msgpack"), fingerprint=True),
    ):
        hooked = torch.Tensor.item
        torch.Tensor.item = timed("item calls", hooked)
        for _ in range(5):
            step()
        sync()
        for seen in spent.values():
            seen.clear()
        for _ in range(steps):
            step()
        sync()
        torch.Tensor.item = hooked
    total = sum(map(sum, spent.values())) / steps / 1e3
    parts = ", ".join(
        f"{part} {sum(seen) / steps / 1e3:.1f} us ({len(seen) // steps} a step,"
        f" median {statistics.median(seen) / 1e3:.1f} us)"
        for part, seen in spent.items()
        if seen
    )
    site = Path(tritontui.__file__).parents[1]
    print(f"{site}: {name}, fingerprints' own work {total:.1f} us a step: {parts}", flush=True)


def main() -> None:
    parser = _builds.arguments(times=2)
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    if args.one or not args.sites:
        one_build(args.steps)
        return
    totals: dict[str, list[float]] = {site: [] for site in args.sites}
    steps = ["--steps", str(args.steps)]
    for site, out in _builds.alternate(__file__, args.sites, args.times, steps):
        totals[site].append(float(re.search(r"own work ([\d.]+) us", out).group(1)))
    first, *later = args.sites
    for site in later:
        ratios = [t / f for t, f in zip(totals[site], totals[first], strict=True)]
        print(f"{site} against {first}: {statistics.median(ratios):.2f}x, pair by pair", end="")
        print(" (" + ", ".join(f"{r:.2f}" for r in ratios) + ")")


if __name__ == "__main__":
    main()

"""Builds of the recorder side by side on the step a user records: the
GPU benchmark's bf16 transformer step where CUDA is there, else the CPU
GPT training step on two threads (``_builds.training_step``). Each build
runs in processes of its own, the builds alternating; every process
times the step unrecorded and with the defaults, metadata only and
fingerprints, taking turns (``_bench.take_turns``), and prints each
mode's median ratio to the unrecorded step with its 95% interval. The
host's speed drifts between processes as much as within one: compare
the builds' ratios pair by pair.

    python scripts/bench_builds.py NEW_SITE OLD_SITE [--times 3] [--rounds 12]

(each SITE a directory holding an installed ``tritontui``, put first on
``PYTHONPATH``: ``pip install --target SITE --no-deps WHEEL``)
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

import _builds

MODES = {
    "unrecorded": None,
    "defaults": {},
    "metadata only": {"hash": "none"},
    "fingerprints": {"fingerprint": True},
}

# Steps a measure times, after one untimed (a session's first step
# defines its kernels).
STEPS = 10


def seconds_a_step(step: Callable[[], None], sync: Callable[[], None]) -> float:
    """Seconds per step of ``STEPS`` steps, the device drained at both
    ends: what the user waits for."""
    step()
    sync()
    start = time.perf_counter()
    for _ in range(STEPS):
        step()
    sync()
    return (time.perf_counter() - start) / STEPS


def one_build(rounds: int) -> None:
    """The ratios of the build this process imports."""
    import _bench
    import tritontui

    name, step, sync = _builds.training_step()
    times = _bench.take_turns(MODES, lambda: seconds_a_step(step, sync), rounds)
    ratios = _bench.paired_ratios(times, "unrecorded")
    plain = statistics.median(times["unrecorded"])
    shown = ", ".join(f"{m} {_bench.summary(ratios[m])}" for m in MODES if m != "unrecorded")
    site = Path(tritontui.__file__).parents[1]
    print(f"{site}: {name}, unrecorded {plain * 1e3:.2f} ms, {shown}", flush=True)


def main() -> None:
    parser = _builds.arguments(times=3)
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args()
    if args.one:
        one_build(args.rounds)
        return
    list(_builds.alternate(__file__, args.sites, args.times, ["--rounds", str(args.rounds)]))


if __name__ == "__main__":
    main()

"""Two builds of the recorder side by side on the GPU benchmark's bf16
transformer step (needs CUDA): each build in processes of its own, the
builds alternating, every process timing the step unrecorded and with
the defaults, metadata only and fingerprints, taking turns
(``_bench.take_turns``), and printing each mode's median ratio to the
unrecorded step with its 95% interval. The host's speed drifts between
processes as much as within one: compare the builds' ratios pair by pair.

    python scripts/bench_gpu_ab.py NEW_SITE OLD_SITE [--times 3] [--rounds 12]

(each SITE a directory holding an installed ``tritontui``, put first on
``PYTHONPATH``: ``pip install --target SITE --no-deps WHEEL``)
"""

from __future__ import annotations

import statistics
from pathlib import Path

import _builds

MODES = {
    "unrecorded": None,
    "defaults": {},
    "metadata only": {"hash": "none"},
    "fingerprints": {"fingerprint": True},
}


def one_build(rounds: int) -> None:
    """The ratios of the build this process imports."""
    import _bench
    import bench_gpu
    import torch
    import tritontui

    step = bench_gpu.compiled_step(torch.bfloat16)
    times = _bench.take_turns(MODES, lambda: bench_gpu.cuda_time(step, 10), rounds)
    ratios = _bench.paired_ratios(times, "unrecorded")
    plain = statistics.median(times["unrecorded"])
    shown = ", ".join(f"{m} {_bench.summary(ratios[m])}" for m in MODES if m != "unrecorded")
    print(f"{Path(tritontui.__file__).parents[1]}: unrecorded {plain * 1e3:.2f} ms, {shown}")


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

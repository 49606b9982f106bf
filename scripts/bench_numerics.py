"""What recording the settings and random state where they act costs
(issue 30), side by side in one run on this machine:

1. one sample of the numerics flags (``_settings.Numerics.changed``): paid
   at every compiled graph's call, and before every eager op the flags
   change (matmuls, convolutions, attention, scatters, large reductions)
   outside a graph call;
2. one read of the default generator's state (``hooks.aten.random_state``):
   paid before every random op;
3. beside them, an eager 64x64 ``mm`` and ``randn(64)`` unrecorded and
   recorded with the defaults, which include those costs.

Medians over ROUNDS rounds of N calls each, in microseconds per call.

    python scripts/bench_numerics.py        # ROUNDS=10, N=2000 by default
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable

import torch
import tritontui
from tritontui import _settings
from tritontui.hooks import aten

ROUNDS = int(os.environ.get("ROUNDS", "10"))
N = int(os.environ.get("N", "2000"))


def per_call_us(work: Callable[[], object]) -> float:
    """Median microseconds per call of ``work`` over ROUNDS rounds."""
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(N):
            work()
        times.append((time.perf_counter() - start) / N * 1e6)
    return statistics.median(times)


def main() -> None:
    torch.set_num_threads(1)
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    numerics = _settings.Numerics()
    randn = torch.ops.aten.randn.default
    rows = {
        "settings sample": per_call_us(numerics.changed),
        "random state read": per_call_us(lambda: aten.random_state(randn, ((64,),), {})),
        "mm, unrecorded": per_call_us(lambda: torch.mm(a, b)),
        "randn, unrecorded": per_call_us(lambda: torch.randn(64)),
    }
    with tempfile.TemporaryDirectory() as tmp:
        with tritontui.record(os.path.join(tmp, "mm.msgpack")):
            rows["mm, recorded"] = per_call_us(lambda: torch.mm(a, b))
        with tritontui.record(os.path.join(tmp, "randn.msgpack")):
            rows["randn, recorded"] = per_call_us(lambda: torch.randn(64))
    for label, us in rows.items():
        print(f"{label:24} {us:8.2f} us")
    for op, added in (("mm", "settings sample"), ("randn", "random state read")):
        recorded = rows[f"{op}, recorded"] - rows[f"{op}, unrecorded"]
        print(
            f"{op}: recording adds {recorded:.2f} us a call, of which the {added} "
            f"is {rows[added] / recorded:.0%}"
        )


if __name__ == "__main__":
    main()

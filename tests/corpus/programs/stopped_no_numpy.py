"""A recording that stops on an internal error, in an environment without
numpy: the program blocks ``import numpy`` before torch loads, as a
Python without numpy installed would. Its input comes from a
``torch.Generator`` seeded with the clock, so its results differ from
run to run. The recorder of 2026-11-23 read a generator's state through
``.numpy()``: at the first op given the generator it warned, stopped
recording, and the trace holds neither the later launches nor the
results (``check`` then said "deterministic")."""

import sys
import time

sys.modules["numpy"] = None  # `import numpy` now raises ImportError

import torch  # noqa: E402
from _harness import parse, run  # noqa: E402

args = parse(__doc__)
weight = torch.ones(64, 64)
f = torch.compile(lambda x, w: (x @ w).relu().sum(0))


def main() -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(time.time_ns())
    x = torch.randn(32, 64, generator=generator)
    return {"out": f(x, weight)}


run(args, main)

"""An eager sum over 4M floats on the host, whose partial sums are split
by the thread count: run B switches to one thread after recording began
(``torch.set_num_threads(1)``), so the header of both runs says two
threads and only the thread count in force at the sum tells them apart.
Before settings were sampled where they act, the sum was called a
nondeterministic kernel."""

import torch
from _harness import parse, run

args = parse(__doc__, variant="switch to one thread after recording began")
torch.manual_seed(0)
x = torch.randn(1 << 22)


def main() -> dict[str, torch.Tensor]:
    if args.variant:
        torch.set_num_threads(1)
    return {"total": x.sum()}


run(args, main)

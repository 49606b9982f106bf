"""An index_add_ into a tensor the compiled function is given and
modifies in place, with colliding indices on two threads; the sum is then
reduced. The C++ kernel accumulates into the input's own bytes (an out
pointer it reads), atomically."""

import torch
from _harness import parse, run

args = parse(__doc__)
torch.manual_seed(0)
n = 1 << 20
src = torch.randn(n)
index = torch.randint(0, 32, (n,))


def accumulate(acc: torch.Tensor, src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    acc.index_add_(0, index, src)
    return acc.sum()


f = torch.compile(accumulate)


def main() -> dict[str, torch.Tensor]:
    acc = torch.ones(32)
    total = f(acc, src, index)
    total2 = f(acc, src.flip(0), index)
    return {"acc": acc, "total": total, "total2": total2}


run(args, main)

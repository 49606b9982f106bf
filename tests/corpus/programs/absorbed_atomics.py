"""Compiled atomic scatter_add sums on two threads whose differences are
absorbed: only the sign of each sum and the index of the largest are
kept, so the results agree bit for bit while the sums may not."""

import torch
from _harness import parse, run

args = parse(__doc__)
torch.manual_seed(0)
n = 1 << 20
src = torch.randn(n) + 0.01
index = torch.randint(0, 64, (n,))


def summarise(src: torch.Tensor, index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    sums = torch.zeros(64).scatter_add(0, index, src)
    return (sums > 0).to(torch.int8), sums.argmax()


f = torch.compile(summarise)


def main() -> dict[str, torch.Tensor]:
    signs, largest = f(src, index)
    return {"signs": signs, "largest": largest}


run(args, main)

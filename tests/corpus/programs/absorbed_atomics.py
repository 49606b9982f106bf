"""Compiled atomic index_add sums on two threads (one graph) whose
differences are absorbed by a second graph: only the sign of each sum and
the index of the largest are kept, so the results agree bit for bit while
the sums, an intermediate freed before the end, do not."""

import torch
from _harness import parse, run

args = parse(__doc__)
torch.manual_seed(0)
n = 1 << 20
src = torch.randn(n) + 0.01
index = torch.randint(0, 64, (n,))


def bin_sums(src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    return torch.zeros(64).index_add(0, index, src)


def summarise(sums: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return (sums > 0).to(torch.int8), sums.argmax()


sum_bins, summary = torch.compile(bin_sums), torch.compile(summarise)


def main() -> dict[str, torch.Tensor]:
    signs, largest = summary(sum_bins(src, index))
    return {"signs": signs, "largest": largest}


run(args, main)

"""Compiled index_add and scatter_add with colliding indices on two
threads: Inductor's C++ kernels add with atomics, so float sums depend on
which thread lands first."""

import torch
from _harness import parse, run

args = parse(__doc__)
torch.manual_seed(0)
n = 1 << 20
src = torch.randn(n)
index = torch.randint(0, 64, (n,))


def scatter(src: torch.Tensor, index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    added = torch.zeros(64).index_add(0, index, src)
    scattered = torch.zeros(64).scatter_add(0, index, src * 2)
    return added * 2, scattered.relu()


f = torch.compile(scatter)


def main() -> dict[str, torch.Tensor]:
    added, scattered = f(src, index)
    return {"added": added, "scattered": scattered, "total": (added + scattered).sum()}


run(args, main)

"""A compiled index_add_ into a tensor the function is given and modifies
in place, then a profiler region and a seeded generator draw: records to
argv[1], keeping the accumulator alive until recording stops."""

import sys

import torch
import tritontui

torch.set_num_threads(1)
torch.manual_seed(0)
src = torch.randn(4096)
index = torch.randint(0, 16, (4096,))


def accumulate(acc: torch.Tensor, src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    acc.index_add_(0, index, src)
    return acc.sum()


f = torch.compile(accumulate)
acc = torch.ones(16)
with tritontui.record(sys.argv[1]):
    total = f(acc, src, index)
    with torch.profiler.record_function("draw"):
        drawn = torch.randint(0, 9, (4,), generator=torch.Generator().manual_seed(3))
print(total.item(), drawn.tolist())

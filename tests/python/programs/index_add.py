"""A compiled index_add with colliding indices: Inductor's C++ kernel adds
with atomics from two threads, so the float sums depend on scheduling."""

import sys

import torch
import tritontui

torch.set_num_threads(2)
torch.manual_seed(0)
n = 1 << 21
src = torch.randn(n)
index = torch.randint(0, 64, (n,))


def scatter(src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    return torch.zeros(64).index_add(0, index, src) * 2


f = torch.compile(scatter)
with tritontui.record(sys.argv[1]):
    out = f(src, index)
    total = out.sum()
print(out[:2].tolist(), total.item())

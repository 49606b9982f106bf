"""index_add.py without its own recording (``tritontui check`` records
it): a compiled index_add with colliding indices, whose C++ kernel adds
with atomics from two threads."""

import torch

torch.set_num_threads(2)
torch.manual_seed(0)
n = 1 << 21
src = torch.randn(n)
index = torch.randint(0, 64, (n,))
f = torch.compile(lambda src, index: torch.zeros(64).index_add(0, index, src) * 2)
print(f(src, index).sum().item())

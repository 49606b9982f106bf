"""A compiled function called three times; recorded through
TRITONTUI_RECORD (``tritontui record``), with pause points from
TRITONTUI_BREAK."""

import torch

torch.set_num_threads(1)
torch.manual_seed(0)
f = torch.compile(lambda x: (x * 2).relu().sum(0) + 1)
x = torch.randn(64, 8)
for _ in range(3):
    y = f(x)
print("done", float(y.sum()))

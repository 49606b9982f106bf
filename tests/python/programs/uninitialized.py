"""A compiled kernel reads a buffer nobody wrote. Each run leaves different
bytes behind in freed memory (argv[2] seeds them), so the runs diverge."""

import sys

import torch
import tritontui

f = torch.compile(lambda b: (b * 2 + 1).sum(0))
f(torch.ones(512, 8))  # compiled outside the recorded region
torch.manual_seed(int(sys.argv[2]))
leftovers = torch.randn(512, 8)
del leftovers
with tritontui.record(sys.argv[1]):
    buffer = torch.empty(512, 8)
    result = f(buffer)
print("done")

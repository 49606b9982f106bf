"""A compiled kernel reads a buffer nobody wrote. Just before it is
allocated, a block of the same size is filled with run-specific bytes
(argv[2] seeds them; numpy writes them, so no recorded op does) and freed:
the allocator usually hands that block out again, so the runs diverge."""

import sys

import numpy as np
import torch
import tritontui

f = torch.compile(lambda b: (b * 2 + 1).sum(0))
f(torch.ones(512, 8))  # compiled outside the recorded region
rng = np.random.default_rng(int(sys.argv[2]))
with tritontui.record(sys.argv[1]):
    leftovers = torch.empty(512, 8)
    leftovers.numpy()[:] = rng.standard_normal((512, 8))
    del leftovers
    buffer = torch.empty(512, 8)
    result = f(buffer)
print("done")

"""gpu_scatter.py's step, compiled, recorded into argv[1] on its second
call (the first compiles)."""

import sys

import torch
import tritontui
from gpu_scatter import index, src, step

f = torch.compile(step)
f(src, index)
with tritontui.record(sys.argv[1]):
    out = f(src, index)
torch.cuda.synchronize()
print(out[:2].tolist())

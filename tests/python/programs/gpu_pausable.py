"""pausable.py on the GPU: a compiled pointwise and reduction function
called three times, compiled while recorded (``tritontui record``), so
Inductor's compile workers build its Triton kernels."""

import torch

f = torch.compile(lambda x: (x * 2).relu().sum(0) + 1)
x = torch.randn(4096, 64, device="cuda")
for _ in range(3):
    y = f(x)
torch.cuda.synchronize()
print("done", float(y.sum()))

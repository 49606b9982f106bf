"""pausable.py on the GPU: a compiled function called three times,
compiled while recorded (``tritontui record``). Inductor compiles in its
worker processes only once their pool is up (before that, in this
process), so the pool is started and waited for first."""

import time

import torch
from torch._inductor.async_compile import AsyncCompile

AsyncCompile.warm_pool()
deadline = time.monotonic() + 120
while not AsyncCompile.use_process_pool() and time.monotonic() < deadline:
    time.sleep(0.2)
f = torch.compile(lambda x: (x * 2).relu().sum(0) + 1)
x = torch.randn(4096, 64, device="cuda")
for _ in range(3):
    y = f(x)
torch.cuda.synchronize()
print("done", float(y.sum()))

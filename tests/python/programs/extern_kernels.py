"""A compiled MLP trained for two steps, recorded into argv[1]: its
matmuls are Inductor's extern kernels (``extern_kernels.mm``,
``extern_kernels.addmm``). Compiled while recording, so the recorder
meets Inductor's namespace of extern kernels only at the first graph
call. Prints the type of ``extern_kernels.mm`` while recording (and how
many calls it recorded, where it is the recorder's proxy) and after."""

import sys

import torch
import tritontui

torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
step = torch.compile(model)
x = torch.randn(16, 32)
with tritontui.record(sys.argv[1]):
    for _ in range(2):
        step(x).square().mean().backward()
    from torch._inductor.select_algorithm import extern_kernels

    mm = extern_kernels.mm
    print(type(mm).__name__, getattr(mm, "dispatched", "-"))
print(type(extern_kernels.mm).__name__)

"""Inductor's Triton codegen on a CPU-only machine, run by the Triton
interpreter: exercises the CachingAutotuner.run hook without a GPU."""

import os
import sys

os.environ["TRITON_INTERPRET"] = "1"

import torch
import torch._inductor.config as config
import torch.utils._triton
import tritontui

config.cpu_backend = "triton"
# Inductor asks the (absent) driver for a hash; the interpreter needs none.
torch.utils._triton.triton_hash_with_backend = lambda: "interpreter"

torch.manual_seed(0)
x, y = torch.randn(1000), torch.randn(1000)
f = torch.compile(lambda x, y: torch.relu(x * 2 + y) - y)
unrecorded = f(x, y)
with tritontui.record(sys.argv[1]):
    recorded = f(x, y)
assert torch.equal(recorded.view(torch.int32), unrecorded.view(torch.int32))
print("done")

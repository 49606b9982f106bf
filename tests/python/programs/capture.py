"""A compiled pointwise kernel, an eager matrix product and a sum, recorded into
argv[1] (without it, as TRITONTUI_RECORD says) with the launches
TRITONTUI_CAPTURE selects captured by value.
BUMP=1 adds 1 to element [5, 7] of the input: the run to compare with.
DEVICE=cuda runs it on the GPU. Prints the product's hash."""

import contextlib
import os
import sys

import torch
import tritontui

torch.manual_seed(0)
x = torch.randn(64, 32)
if os.environ.get("BUMP") == "1":
    x[5, 7] += 1.0
x = x.to(os.environ.get("DEVICE", "cpu"))
f = torch.compile(lambda t: (t * 2).sin())
with tritontui.record(sys.argv[1]) if sys.argv[1:] else contextlib.nullcontext():
    y = f(x)
    z = torch.mm(y, y.t())
    w = torch.add(z, z, alpha=2)  # a scalar argument before its result
print("product", f"{tritontui.hash_tensor(z):#x}")

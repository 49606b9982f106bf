"""A user-written Triton kernel launched eagerly, run by the Triton
interpreter on the CPU: exercises the JITFunction hook without a GPU."""

import os
import sys

os.environ["TRITON_INTERPRET"] = "1"

import torch
import triton
import triton.language as tl
import tritontui


@triton.jit
def scale_add(x_ptr, y_ptr, out_ptr, n, ALPHA: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * ALPHA + y, mask=mask)


torch.manual_seed(0)
x, y = torch.randn(1000), torch.randn(1000)
out = torch.zeros(1000)
with tritontui.record(sys.argv[1], aten=False):
    # A tuple grid: the interpreter cannot evaluate callable grids under
    # numpy 2 (tests/python/test_gpu.py launches one with a callable grid).
    scale_add[(triton.cdiv(1000, 256),)](x, y, out, 1000, ALPHA=2.0, BLOCK=256)
assert torch.equal(out, x * 2.0 + y)
print("done")

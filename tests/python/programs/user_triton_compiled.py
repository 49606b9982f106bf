"""A user-written Triton kernel with float atomic adds (a scatter-add of
100,000 values into 64 bins) called from a compiled function on a GPU,
recorded to argv[1] with that kernel's launches captured."""

import sys

import torch
import triton
import triton.language as tl
import tritontui


@triton.jit
def scatter_add(index_ptr, source_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    index = tl.load(index_ptr + offsets, mask=mask)
    value = tl.load(source_ptr + offsets, mask=mask)
    tl.atomic_add(out_ptr + index, value, mask=mask)


@torch.compile
def binned(index: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(64, device=source.device)
    n = source.numel()
    scatter_add[(triton.cdiv(n, 256),)](index, source, out, n, BLOCK=256)
    return out * 2


torch.manual_seed(0)
index = torch.randint(0, 64, (100_000,), device="cuda")
source = torch.randn(100_000, device="cuda")
with tritontui.record(sys.argv[1], capture="*scatter_add*"):
    binned(index, source)
    torch.cuda.synchronize()

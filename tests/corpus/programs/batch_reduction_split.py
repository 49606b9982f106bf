"""A compiled float32 RMSNorm over a long row (65,536 values) on the CPU
with two threads, evaluated on one request (one row) alone; with
--variant on the same request as row 0 of a batch of 64. Inductor's C++
kernel splits a lone row's reduction between the two threads and adds
their partial sums, while in a batch each thread reduces whole rows.
Recorded with row hashes (``rows``). The result is the request's
output."""

import torch
from _batch import compiled_apart, run_request
from _harness import parse

args = parse(__doc__, variant="the request as row 0 of a batch of 64")
torch.manual_seed(0)
weight = torch.randn(1 << 16)


def rms_norm(x: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight


compiled = torch.compile(rms_norm)
batch = torch.randn(64, 1 << 16, generator=torch.Generator().manual_seed(1))
run_request(args, compiled, batch, 0, compiled_apart(rms_norm, compiled, batch))

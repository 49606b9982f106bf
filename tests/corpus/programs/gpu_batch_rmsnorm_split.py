"""A compiled float32 RMSNorm over rows of 65,536 values on a CUDA device,
evaluated on one request of 8 such rows alone; with --variant on the same
request as row 0 of a batch of 64. With 8 rows to reduce Inductor splits
each row's reduction into partial sums and a kernel that combines them
(too few rows to fill the device), with 512 it reduces each row in one
kernel: the two batch sizes run other kernels. Recorded with row hashes
(``rows``). The result is the request's output."""

import torch
from _batch import compiled_apart, run_request
from _harness import parse

args = parse(__doc__, variant="the request as row 0 of a batch of 64")
torch.manual_seed(0)
weight = torch.randn(1 << 16, device="cuda")


def rms_norm(x: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight


compiled = torch.compile(rms_norm)
batch = torch.randn(64, 8, 1 << 16, generator=torch.Generator().manual_seed(1)).cuda()
run_request(args, compiled, batch, 0, compiled_apart(rms_norm, compiled, batch))

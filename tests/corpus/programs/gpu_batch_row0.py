"""A compiled bfloat16 decoder-style block (LayerNorm, Linear 2048→8192,
GELU, Linear 8192→2048) on a CUDA device, evaluated without gradients on
one request of 16 tokens alone; with --variant on the same request as
row 0 of a batch of 64. Recorded with row hashes (``rows``). The result
is the request's output."""

import torch
from _batch import model_apart, run_request
from _harness import parse

args = parse(__doc__, variant="the request as row 0 of a batch of 64")
torch.manual_seed(0)
model = (
    torch.nn.Sequential(
        torch.nn.LayerNorm(2048),
        torch.nn.Linear(2048, 8192),
        torch.nn.GELU(),
        torch.nn.Linear(8192, 2048),
    )
    .to("cuda", torch.bfloat16)
    .eval()
)
batch = torch.randn(64, 16, 2048, generator=torch.Generator().manual_seed(1))
batch = batch.to("cuda", torch.bfloat16)
run_request(args, torch.compile(model), batch, 0, model_apart(model, batch))

"""A compiled float32 MLP (LayerNorm, Linear 512→2048, GELU, Linear) on
the CPU, evaluated without gradients on one request (one row) alone;
with --variant on the same request as row 0 of a batch of 64. Recorded
with row hashes (``rows``). The result is the request's output."""

import torch
from _batch import mlp, model_apart, run_request
from _harness import parse

args = parse(__doc__, variant="the request as row 0 of a batch of 64")
model = mlp()
batch = torch.randn(64, 512, generator=torch.Generator().manual_seed(1))
run_request(args, torch.compile(model), batch, 0, model_apart(model, batch))

"""A compiled ``nn.TransformerEncoderLayer`` (d=256, 4 heads, feed-forward
1,024, no dropout, float32) on a CUDA device, evaluated under ``no_grad``
on one request of 64 tokens alone; with --variant on the same request as
row 0 of a batch of 8, as ``tritontui.check_batch_invariance`` runs it.
Recorded with row hashes (``rows``). The result is the request's
output."""

import torch
from _batch import compiled_apart, run_request
from _harness import parse

args = parse(__doc__, variant="the request as row 0 of a batch of 8")
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True, dropout=0.0).cuda()


def encoder_layer(x: torch.Tensor) -> torch.Tensor:
    return layer(x)


compiled = torch.compile(encoder_layer)
batch = torch.randn(8, 64, 256, generator=torch.Generator().manual_seed(1)).cuda()
run_request(args, compiled, batch, 0, compiled_apart(encoder_layer, compiled, batch))

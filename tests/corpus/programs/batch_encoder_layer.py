"""A compiled ``nn.TransformerEncoderLayer`` (d=256, 4 heads, feed-forward
1,024, no dropout, float32) on the CPU, evaluated under ``no_grad`` on one
request of 64 tokens alone; with --variant on the same request as row 0
of a batch of 8, as ``tritontui.check_batch_invariance`` runs it.
``nn.MultiheadAttention`` with ``batch_first`` runs its projections on
``[T, N, D]``: in run B the request's rows of their matmuls are every
8th. Recorded with row hashes (``rows``). The result is the request's
output; what confirms it is each of the layer's four matmul shapes run
alone on the request's rows, by themselves and inside a batch of 512
rows (consecutive, or every 8th as the projections see them)."""

import torch
from _batch import run_request
from _harness import parse

args = parse(__doc__, variant="the request as row 0 of a batch of 8")
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True, dropout=0.0)


def encoder_layer(x: torch.Tensor) -> torch.Tensor:
    return layer(x)


def matmuls_apart() -> dict[str, float]:
    """Each matmul shape of the layer (input projection, output
    projection, the two feed-forward linears) on 64 rows alone against the
    same rows among 512: the largest difference in their outputs."""
    generator = torch.Generator().manual_seed(2)
    apart = {}
    for k, n in ((256, 768), (256, 256), (256, 1024), (1024, 256)):
        weight, bias = torch.randn(n, k, generator=generator), torch.randn(n, generator=generator)
        rows = torch.randn(64, k, generator=generator)
        for placed, at in (("consecutive", slice(0, 64)), ("every 8th", slice(0, None, 8))):
            batch = torch.randn(512, k, generator=generator)
            batch[at] = rows
            alone = torch.addmm(bias, rows, weight.t())
            inside = torch.addmm(bias, batch, weight.t())[at]
            apart[f"addmm {k}->{n}, {placed}"] = (alone - inside).abs().max().item()
    return apart


compiled = torch.compile(encoder_layer)
batch = torch.randn(8, 64, 256, generator=torch.Generator().manual_seed(1))
run_request(args, compiled, batch, 0, matmuls_apart)

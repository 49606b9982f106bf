"""A compiled bfloat16 decoder-style block (LayerNorm, Linear 2048→8192,
GELU, Linear 8192→2048) on a CUDA device, evaluated without gradients on
one request of 16 tokens alone; with --variant on the same request as
row 0 of a batch of 64. Recorded with row hashes (``rows``). The result
is the request's output."""

import torch
from _batch import layers_apart, named_layers
from _harness import parse, run

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
compiled = torch.compile(model)
batch = torch.randn(64, 16, 2048, generator=torch.Generator().manual_seed(1))
batch = batch.to("cuda", torch.bfloat16)
x = batch if args.variant else batch[:1].clone()


def main() -> dict[str, torch.Tensor]:
    with torch.no_grad():
        out = compiled(x)
    torch.cuda.synchronize()
    return {"request": out[0].clone()}


def confirm() -> dict[str, float]:
    """Each layer eagerly on the lone request and on the batch."""
    return layers_apart(named_layers(model), batch[:1].clone(), batch, request=0)


run(args, main, rows=True, confirm=confirm)

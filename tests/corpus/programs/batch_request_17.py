"""The compiled float32 MLP of ``batch_row0`` (LayerNorm, Linear
512→2048, GELU, Linear) on the CPU, evaluated without gradients on one
request alone; with --variant on the same request as row 17 of a batch of
64 (compared with ``--request A:0 B:17``). Recorded with row hashes
(``rows``). The result is the request's output."""

import torch
from _batch import layers_apart, named_layers
from _harness import parse, run

args = parse(__doc__, variant="the request as row 17 of a batch of 64")
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.LayerNorm(512),
    torch.nn.Linear(512, 2048),
    torch.nn.GELU(),
    torch.nn.Linear(2048, 512),
).eval()
compiled = torch.compile(model)
batch = torch.randn(64, 512, generator=torch.Generator().manual_seed(1))
x = batch if args.variant else batch[17:18].clone()


def main() -> dict[str, torch.Tensor]:
    with torch.no_grad():
        out = compiled(x)
    return {"request": out[17 if args.variant else 0].clone()}


def confirm() -> dict[str, float]:
    """Each layer eagerly on the lone request and on the batch."""
    return layers_apart(named_layers(model), batch[17:18].clone(), batch, request=17)


run(args, main, rows=True, confirm=confirm)

"""The compiled float32 MLP of ``batch_row0`` made batch-invariant: each
Linear is a custom op that multiplies one row at a time, so a row's
result cannot depend on the others. On the CPU, evaluated without
gradients on one request alone; with --variant on the same request as row
0 of a batch of 64. Recorded with row hashes (``rows``). The result is
the request's output."""

import torch
from _batch import layers_apart, named_layers
from _harness import parse, run

args = parse(__doc__, variant="the request as row 0 of a batch of 64")


@torch.library.custom_op("corpus::rowwise_linear", mutates_args=())
def rowwise_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """``x @ weight.T + bias``, one row of ``x`` at a time."""
    return torch.stack([torch.nn.functional.linear(row, weight, bias) for row in x])


@rowwise_linear.register_fake
def _(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return x.new_empty(x.shape[0], weight.shape[0])


class RowwiseLinear(torch.nn.Linear):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rowwise_linear(x, self.weight, self.bias)


torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.LayerNorm(512),
    RowwiseLinear(512, 2048),
    torch.nn.GELU(),
    RowwiseLinear(2048, 512),
).eval()
compiled = torch.compile(model)
batch = torch.randn(64, 512, generator=torch.Generator().manual_seed(1))
x = batch if args.variant else batch[:1].clone()


def main() -> dict[str, torch.Tensor]:
    with torch.no_grad():
        out = compiled(x)
    return {"request": out[0].clone()}


def confirm() -> dict[str, float]:
    """Each layer eagerly on the lone request and on the batch."""
    return layers_apart(named_layers(model), batch[:1].clone(), batch, request=0)


run(args, main, rows=True, confirm=confirm)

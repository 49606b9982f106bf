"""The compiled float32 MLP of ``batch_row0`` made batch-invariant: each
Linear is a custom op that multiplies one row at a time, so a row's
result cannot depend on the others. On the CPU, evaluated without
gradients on one request alone; with --variant on the same request as row
0 of a batch of 64. Recorded with row hashes (``rows``). The result is
the request's output."""

import torch
from _batch import mlp, model_apart, run_request
from _harness import parse

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


model = mlp(RowwiseLinear)
batch = torch.randn(64, 512, generator=torch.Generator().manual_seed(1))
run_request(args, torch.compile(model), batch, 0, model_apart(model, batch))

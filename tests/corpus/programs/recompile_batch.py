"""An MLP trained for two steps with SGD, compiled; with --variant the
program also evaluates it on a batch of another size between the steps,
which recompiles the model (a guard on the batch size fails): run B made
launches run A did not, and its results are the same."""

import torch
from _harness import parse, run, state, train

args = parse(__doc__, variant="evaluate on a batch of 12 between the steps")
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
forward = torch.compile(model)
g = torch.Generator().manual_seed(1)
x, y = torch.randn(8, 16, generator=g), torch.randn(8, 4, generator=g)


def main() -> dict[str, torch.Tensor]:
    losses = train(optimizer, lambda: torch.nn.functional.mse_loss(forward(x), y), 1)
    if args.variant:
        with torch.no_grad():
            forward(torch.randn(12, 16, generator=g))
    losses = torch.cat(
        [losses, train(optimizer, lambda: torch.nn.functional.mse_loss(forward(x), y), 1)]
    )
    return {"loss": losses, **state(model, optimizer)}


run(args, main)

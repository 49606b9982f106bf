"""An MLP trained for two steps with Adam, compiled; with --variant one
weight is changed by 1e-3 before recording starts, as two versions of a
checkpoint would differ."""

import torch
from _harness import parse, run, state, train

args = parse(__doc__, variant="change one weight by 1e-3 before recording")
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(16, 32),
    torch.nn.Tanh(),
    torch.nn.Linear(32, 32),
    torch.nn.Tanh(),
    torch.nn.Linear(32, 4),
)
if args.variant:
    with torch.no_grad():
        model[2].weight[5, 3] += 1e-3
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
step = torch.compile(model)
g = torch.Generator().manual_seed(1)
x, y = torch.randn(64, 16, generator=g), torch.randn(64, 4, generator=g)


def main() -> dict[str, torch.Tensor]:
    losses = train(optimizer, lambda: torch.nn.functional.mse_loss(step(x), y), 2)
    return {"loss": losses, **state(model, optimizer)}


run(args, main)

"""A compiled MLP trained for two steps with Adam on the GPU, each step's
batch drawn on the host from a seeded generator and copied to the GPU, as
a data loader's batches are; with --variant the generator has another
seed (another data order)."""

import torch
from _harness import parse, run, state, train

args = parse(__doc__, variant="another seed for the host batches")
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4)).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
step = torch.compile(model)
batches = torch.Generator().manual_seed(2 if args.variant else 1)


def loss() -> torch.Tensor:
    x = torch.randn(64, 16, generator=batches).to("cuda")
    y = torch.randn(64, 4, generator=batches).to("cuda")
    return torch.nn.functional.mse_loss(step(x), y)


def main() -> dict[str, torch.Tensor]:
    losses = train(optimizer, loss, 2)
    return {"loss": losses, **state(model, optimizer)}


run(args, main)

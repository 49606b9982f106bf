"""A compiled MLP with dropout, trained one step, whose weights come
from seed 0 and whose dropout masks from the default generator seeded
afterwards: ``torch.manual_seed(1)`` in run A, ``torch.manual_seed(2)`` in
run B. Inductor draws its seeds with one ``aten::randint.low_out`` per
graph call, from the default generator: its state is an input of that
launch. Before it was recorded, the draws were called nondeterministic
kernels."""

import torch
from _harness import parse, run, state, train

args = parse(__doc__, variant="seed the dropout with 2 instead of 1")
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Dropout(0.5), torch.nn.Linear(64, 8)
)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 32), torch.randn(16, 8)
step = torch.compile(lambda: torch.nn.functional.mse_loss(model(x), y))


def main() -> dict[str, torch.Tensor]:
    torch.manual_seed(2 if args.variant else 1)
    losses = train(optimizer, step, steps=1)
    return {"losses": losses, **state(model, optimizer)}


run(args, main)

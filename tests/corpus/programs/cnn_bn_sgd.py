"""A small CNN (convolutions, batch norm, ReLU, pooling, a linear head)
trained for three steps with SGD and momentum, compiled, on two threads."""

import torch
from _harness import parse, run, state, train

args = parse(__doc__)
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 8, 3, padding=1),
    torch.nn.BatchNorm2d(8),
    torch.nn.ReLU(),
    torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(8, 16, 3, padding=1),
    torch.nn.BatchNorm2d(16),
    torch.nn.ReLU(),
    torch.nn.AdaptiveAvgPool2d(1),
    torch.nn.Flatten(),
    torch.nn.Linear(16, 10),
)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
step = torch.compile(model)
g = torch.Generator().manual_seed(1)
images, labels = torch.randn(8, 3, 16, 16, generator=g), torch.randint(0, 10, (8,), generator=g)


def main() -> dict[str, torch.Tensor]:
    losses = train(optimizer, lambda: torch.nn.functional.cross_entropy(step(images), labels), 3)
    return {"loss": losses, **state(model, optimizer)}


run(args, main)

"""A model that calls one Linear twice in its forward (``fc``, then
``fc@1``), eagerly or, with a second argument, compiled, recorded with
samples to argv[1]: one forward on the CPU."""

import sys

import torch
import tritontui


class Twice(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)
        self.out = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.fc(torch.relu(self.fc(x))))


torch.manual_seed(0)
model = Twice()
if len(sys.argv) > 2:
    model = torch.compile(model)
x = torch.randn(8, 16)
with tritontui.record(sys.argv[1], samples=True):
    model(x)

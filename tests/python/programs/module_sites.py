"""Two residual blocks compiled, one forward and backward, recorded to
argv[1]; with a second argument block 1 rounds its activation to 1/64
(the ops ``aten.mul``, ``aten.round``, ``aten.div`` in module ``1``). On
the device ``MODULE_SITES_DEVICE`` names (the CPU by default)."""

import os
import sys

import torch
import tritontui


class Block(torch.nn.Module):
    def __init__(self, rounds: bool) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(32)
        self.fc = torch.nn.Linear(32, 32)
        self.rounds = rounds

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(self.fc(self.norm(x)))
        if self.rounds:
            h = torch.round(h * 64) / 64
        return x + h


torch.manual_seed(0)
device = os.environ.get("MODULE_SITES_DEVICE", "cpu")
model = torch.nn.Sequential(Block(False), Block(len(sys.argv) > 2)).to(device)
model = torch.compile(model)
x = torch.randn(8, 32, device=device)
with tritontui.record(sys.argv[1]):
    model(x).square().mean().backward()

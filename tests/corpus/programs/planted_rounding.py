"""A compiled stack of three residual blocks (LayerNorm, Linear, GELU)
trained one AdamW step; with --variant the middle block rounds its
activation to a grid of 1/64 (a planted precision bug that Inductor
fuses into the block's kernel): the same model otherwise, so the first
place the two programs differ is the kernel that rounds."""

import torch
from _harness import parse, run

args = parse(__doc__, variant="the middle block rounds its activation to 1/64")


class Block(torch.nn.Module):
    def __init__(self, width: int, rounds: bool) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.fc = torch.nn.Linear(width, width)
        self.rounds = rounds

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(self.fc(self.norm(x)))
        if self.rounds:
            h = torch.round(h * 64) / 64
        return x + h


torch.manual_seed(0)
model = torch.nn.Sequential(*[Block(64, rounds=args.variant and i == 1) for i in range(3)])
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
step = torch.compile(model)
x = torch.randn(16, 64)


def main() -> dict[str, torch.Tensor]:
    loss = step(x).square().mean()
    loss.backward()
    optimizer.step()
    return {"loss": loss.detach(), **{n: p.detach() for n, p in model.named_parameters()}}


run(args, main, threads=1)

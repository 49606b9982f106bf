"""What the corpus's data-parallel programs share: the models they train
and their training loop (each rank on its own batches, drawn on the host
from a generator seeded by its rank)."""

from __future__ import annotations

import torch


class MLP(torch.nn.Module):
    """Three linear layers with GELU between: about 1 MB of gradients a
    layer, one DDP bucket each at ``bucket_cap_mb=1``."""

    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(256, 512)
        self.b = torch.nn.Linear(512, 512)
        self.c = torch.nn.Linear(512, 256)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gelu = torch.nn.functional.gelu
        return self.c(gelu(self.b(gelu(self.a(x)))))


def sharded_mlp(device: torch.device | str = "cpu") -> torch.nn.Sequential:
    """A two-layer MLP on ``device`` under FSDP2: each linear layer and the
    whole model ``fully_shard``-ed."""
    from torch.distributed.fsdp import fully_shard

    model = torch.nn.Sequential(
        torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)
    ).to(device)
    for layer in (model[0], model[2]):
        fully_shard(layer)
    fully_shard(model)
    return model


def train(
    step, optimizer, batches: torch.Generator, steps: int, rows: int, device="cpu", **zero
) -> torch.Tensor:
    """``steps`` steps of ``step`` (the model, compiled) on batches of
    ``rows`` drawn from ``batches`` and moved to ``device``, each followed
    by ``optimizer.step()`` and ``zero_grad(**zero)``; the last loss."""
    for _ in range(steps):
        loss = step(torch.randn(rows, 256, generator=batches).to(device)).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(**zero)
    return loss

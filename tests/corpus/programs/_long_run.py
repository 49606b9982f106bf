"""A long compiled training loop (500 steps of a small MLP, AdamW) whose
data picks up clock-seeded noise at one step only (step 400): what
``check --steps`` is for. Every other step is deterministic on the CPU.
Run as a script (no arguments) it trains unrecorded, as ``tritontui
check`` runs it; the corpus pairs record it with the harness."""

from __future__ import annotations

import time

import torch
from _harness import state

STEPS = 500
NOISY_STEP = 400


def train_long() -> dict[str, torch.Tensor]:
    """Trains for STEPS steps, the batch at NOISY_STEP drawn with noise
    from a generator seeded by the clock; the results."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_of = torch.compile(lambda x, y: torch.nn.functional.mse_loss(model(x), y))
    data, target = torch.randn(64, 32), torch.randn(64, 1)
    clock = torch.Generator().manual_seed(time.time_ns())
    losses = []
    for step in range(STEPS):
        x = data
        if step == NOISY_STEP:
            x = data + 1e-3 * torch.randn(data.shape, generator=clock)
        loss = loss_of(x, target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % 100 == 0:
            losses.append(loss.item())
    return {"losses": torch.tensor(losses), **state(model, optimizer)}


if __name__ == "__main__":
    train_long()

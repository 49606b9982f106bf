"""Gradient accumulation over two micro-batches, gradient-norm clipping,
zero_grad(set_to_none=False) and a learning-rate scheduler around a
compiled MLP with layer norm, trained with AdamW on two threads.
Deterministic."""

import torch
from _harness import parse, run, state

args = parse(__doc__)
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(24, 48), torch.nn.LayerNorm(48), torch.nn.SiLU(), torch.nn.Linear(48, 6)
)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1)
schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
step = torch.compile(model)
g = torch.Generator().manual_seed(1)
batches = [
    (torch.randn(32, 24, generator=g), torch.randint(0, 6, (32,), generator=g)) for _ in range(4)
]


def main() -> dict[str, torch.Tensor]:
    losses = []
    for i in range(0, 4, 2):
        optimizer.zero_grad(set_to_none=False)
        for x, y in batches[i : i + 2]:
            loss = torch.nn.functional.cross_entropy(step(x), y) / 2
            loss.backward()
            losses.append(loss.detach())
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        schedule.step()
    return {"loss": torch.stack(losses), **state(model, optimizer)}


run(args, main)

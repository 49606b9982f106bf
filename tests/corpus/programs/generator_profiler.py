"""Host objects inside the recorded region: a seeded torch.Generator
drawn from (randint, dropout masks through bernoulli_), record_function
regions, and an optimizer whose step() opens its own profiler region;
a compiled MLP is trained on what was drawn. Deterministic."""

import torch
from _harness import parse, run, state

args = parse(__doc__)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
step = torch.compile(model)


def main() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(1234)
    losses = []
    for _ in range(2):
        with torch.profiler.record_function("draw"):
            idx = torch.randint(0, 8, (32,), generator=g)
            x = torch.nn.functional.one_hot(idx, 8).float()
            mask = torch.empty(32, 8).bernoulli_(0.9, generator=g)
        with torch.profiler.record_function("train"):
            loss = (step(x * mask) - x).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        losses.append(loss.detach())
    return {"loss": torch.stack(losses), **state(model, optimizer)}


run(args, main)

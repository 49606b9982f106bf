"""A compiled MLP evaluated without gradients on a batch of 16 requests,
recorded with row hashes (``rows``); with --variant request 5's input is
changed by 1e-3 before recording starts, as one request of a batch served
with other data would differ."""

import torch
from _harness import parse, run

args = parse(__doc__, variant="change request 5's input by 1e-3")
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 8)).eval()
compiled = torch.compile(model)
x = torch.randn(16, 32, generator=torch.Generator().manual_seed(1))
if args.variant:
    x[5] += 1e-3


def main() -> dict[str, torch.Tensor]:
    with torch.no_grad():
        out = compiled(x)
    return {"output": out}


run(args, main, rows=True)

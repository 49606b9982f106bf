"""Two configs: a compiled float32 MLP (LayerNorm, Linear 128→512, GELU,
Linear 512→128) trained two AdamW steps on the CPU, compiled for static
shapes in run A and for dynamic shapes in run B (--variant,
``torch.compile(dynamic=True)``): B's kernels take the batch size as an
argument, so each kernel of a name has another source and one argument
more. Recorded with samples; the results agree bit for bit."""

import torch
from _harness import parse, run, state, train

args = parse(__doc__, variant="compile for dynamic shapes")
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.LayerNorm(128),
    torch.nn.Linear(128, 512),
    torch.nn.GELU(),
    torch.nn.Linear(512, 128),
)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
compiled = torch.compile(model, dynamic=args.variant)
x = torch.randn(48, 128)


def main() -> dict[str, torch.Tensor]:
    losses = train(optimizer, lambda: compiled(x).square().mean(), steps=2)
    return {"losses": losses, **state(model, optimizer)}


run(args, main, samples=True)

"""Two configs of one training step: a compiled float32 MLP (Linear
128→512, GELU, Linear 512→128) takes one AdamW step on a batch of 64 on
the CPU, its gradient from the whole batch in run A and accumulated over
two micro-batches of 32 in run B (--variant), each loss halved. The
parameters, gradients and optimizer state are the results; the losses
are not kept. The two programs' micro-batch losses are other quantities
than the batch's loss (a mean over 32 rows, halved, against one over
64), though the same ops write them;
accumulation only reorders the gradient's sums. A float64 run of the
batch step says how far each run is off."""

import torch
from _harness import parse, run, state

args = parse(__doc__, variant="accumulate the gradient over two micro-batches")
dtype = torch.float64 if args.float64 else torch.float32


def step(micro: int, dtype: torch.dtype, compiled: bool):
    """One AdamW step over `micro` micro-batches, seeded, in `dtype`."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(128, 512), torch.nn.GELU(), torch.nn.Linear(512, 128)
    ).to(dtype)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    forward = torch.compile(model) if compiled else model
    x, y = torch.randn(64, 128, dtype=dtype), torch.randn(64, 128, dtype=dtype)

    def main() -> dict[str, torch.Tensor]:
        optimizer.zero_grad()
        for xs, ys in zip(x.chunk(micro), y.chunk(micro), strict=True):
            (((forward(xs) - ys) ** 2).mean() / micro).backward()
        optimizer.step()
        return state(model, optimizer)

    return main


run(
    args,
    step(2 if args.variant else 1, dtype, compiled=not args.float64),
    samples=True,
    reference=step(1, torch.float64, compiled=False),
)

"""A compiled stack of three residual blocks (LayerNorm, Linear, GELU)
trained one AdamW step; with --variant the middle block's LayerNorm has
an epsilon of 1e-2 instead of 1e-5 (a bug planted in one module: a
mistyped constant), which Inductor bakes into that LayerNorm's kernel:
the same model otherwise, so the first place the two programs differ is
that kernel. Its kernels write their statistics into in/out buffers just
allocated, whose old bytes are whatever the memory held. Recorded with
samples; a float64 run of the model without the bug says how far each
run is off."""

import torch
from _harness import parse, run
from _residual_mlp import training

args = parse(__doc__, variant="the middle block's LayerNorm has eps=1e-2")
run(
    args,
    training(
        blocks=3,
        width=64,
        steps=1,
        compiled=not args.float64,
        eps=(1, 1e-2) if args.variant else None,
        dtype=torch.float64 if args.float64 else torch.float32,
    ),
    threads=1,
    samples=True,
    reference=training(blocks=3, width=64, steps=1, dtype=torch.float64),
)

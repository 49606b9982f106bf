"""Eager against compiled: four residual blocks (LayerNorm, Linear, GELU)
trained two AdamW steps in float32 on the CPU, eagerly in run A and
compiled in run B (--variant). Inductor fuses and reorders, so the
results differ in their last bits; a float64 run of the same model says
by how much each run is off."""

import torch
from _harness import parse, run
from _residual_mlp import training

args = parse(__doc__, variant="compile the model")
run(
    args,
    training(
        blocks=4,
        width=64,
        steps=2,
        compiled=args.variant,
        dtype=torch.float64 if args.float64 else torch.float32,
    ),
    threads=1,
    samples=True,
    reference=training(blocks=4, width=64, steps=2, dtype=torch.float64),
)

"""Eager against compiled on a GPU: four residual blocks (LayerNorm,
Linear, GELU) trained two AdamW steps in float32 (TF32 off, as torch's
default), eagerly in run A and compiled in run B (--variant). A float64
run of the same model says by how much each run is off."""

import torch
from _harness import parse, run
from _residual_mlp import training

args = parse(__doc__, variant="compile the model")
run(
    args,
    training(blocks=4, width=256, steps=2, device="cuda", compiled=args.variant),
    samples=True,
    reference=training(blocks=4, width=256, steps=2, dtype=torch.float64, device="cuda"),
)

"""float32 against bfloat16 autocast: four residual blocks (LayerNorm,
Linear, GELU) trained two AdamW steps on the CPU, in float32 in run A
and under bfloat16 autocast in run B (--variant). The matmuls round to
bfloat16, so the results part well past float32's rounding; a float64
run of the same model says by how much each run is off."""

import torch
from _harness import parse, run
from _residual_mlp import training

args = parse(__doc__, variant="train under bfloat16 autocast")
run(
    args,
    training(blocks=4, width=64, steps=2, autocast=torch.bfloat16 if args.variant else None),
    threads=1,
    samples=True,
    reference=training(blocks=4, width=64, steps=2, dtype=torch.float64),
)

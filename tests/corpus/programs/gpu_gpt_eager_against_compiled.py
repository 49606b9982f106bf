"""Eager against compiled on a GPU: the small GPT (two transformer blocks:
causal attention through scaled_dot_product_attention and a GELU MLP)
trained three AdamW steps in float32 (TF32 off, torch's default), eagerly
in run A and compiled in run B (--variant). Recorded with samples; a
float64 run of the same model says by how much each run is off."""

import torch
from _gpt import training
from _harness import parse, run

args = parse(__doc__, variant="compile the model")
run(
    args,
    training(
        vocab=96,
        batch=4,
        device="cuda",
        compiled=args.variant and not args.float64,
        dtype=torch.float64 if args.float64 else torch.float32,
    ),
    samples=True,
    reference=training(vocab=96, batch=4, device="cuda", compiled=False, dtype=torch.float64),
)

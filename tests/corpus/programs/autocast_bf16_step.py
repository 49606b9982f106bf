"""float32 against a whole training step under bfloat16 autocast: four
residual blocks (LayerNorm, Linear, GELU) trained two AdamW steps on the
CPU, in float32 in run A and with forward, backward and optimizer step
all inside ``torch.autocast`` in run B (--variant). Its errors are as
large as one step's change to the optimizer state, so values alone cannot
tell every tensor of one step from the next: the engine once blamed the
second step's ``aten::lerp_`` (AdamW's first moment, a cancellation of
errors it read through tensors only B materializes) for a bug. A float64
run of the model says how far each run is off."""

import torch
from _harness import parse, run
from _residual_mlp import training

args = parse(__doc__, variant="train the whole step under bfloat16 autocast")
train = training(blocks=4, width=64, steps=2)


def step() -> dict[str, torch.Tensor]:
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.variant):
        return train()


run(
    args,
    step,
    threads=1,
    samples=True,
    reference=training(blocks=4, width=64, steps=2, dtype=torch.float64),
)

"""A small float32 MLP with a LayerNorm (Linear 128->256, GELU, Linear
256->128, LayerNorm, Linear 128->10) evaluated under ``no_grad`` and
bfloat16 autocast on the CPU: eagerly in run A, compiled in run B
(--variant). Both runs give the same output bit for bit. Eager
``native_layer_norm`` returns the normalized rows, their means and their
reciprocal standard deviations; Inductor's fused kernel writes the
normalized rows, the means and the sums of squared deviations (Welford's
M2): two [32, 1] float32 tensors of different quantities, which no launch
of either run reads."""

import torch
from _harness import parse, run
from _norm_mlp import norm_mlp

args = parse(__doc__, variant="compile the model")
model = norm_mlp()
forward = torch.compile(model) if args.variant else model
x = torch.randn(32, 128, generator=torch.Generator().manual_seed(1))


def main() -> dict[str, torch.Tensor]:
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        return {"output": forward(x)}


run(args, main, samples=True)

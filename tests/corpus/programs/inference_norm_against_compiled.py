"""Eager against compiled inference: a float32 MLP with two LayerNorms
(Linear 128->256, GELU, Linear 256->128, LayerNorm, SiLU, Linear
128->64, LayerNorm, Linear 64->10) evaluated under ``no_grad`` on the
CPU, eagerly in run A and compiled in run B (--variant). The outputs
differ in their last bits; a float64 run says by how much each is off.
Eager ``native_layer_norm`` also returns its rows' means and reciprocal
standard deviations, Inductor's kernel its means and sums of squared
deviations: [32, 1] tensors that nothing reads."""

import torch
from _harness import parse, run
from _norm_mlp import norm_mlp

args = parse(__doc__, variant="compile the model")
x = torch.randn(32, 128, generator=torch.Generator().manual_seed(1))


def inference(compiled: bool, dtype: torch.dtype):
    model = norm_mlp(second_norm=True).to(dtype)
    forward = torch.compile(model) if compiled else model

    def main() -> dict[str, torch.Tensor]:
        with torch.no_grad():
            return {"output": forward(x.to(dtype))}

    return main


run(
    args,
    inference(args.variant, torch.float32),
    samples=True,
    reference=inference(False, torch.float64),
)

"""A compiled stack of three residual blocks (LayerNorm, Linear, GELU)
trained one AdamW step; with --variant the middle block's LayerNorm has
an epsilon of 1e-2 instead of 1e-5 (a bug planted in one module: a
mistyped constant), which Inductor bakes into that LayerNorm's kernel:
the same model otherwise, so the first place the two programs differ is
that kernel. Its kernels write their statistics into in/out buffers just
allocated, whose old bytes are whatever the memory held. Recorded with
samples; a float64 run of the model without the bug says how far each
run is off."""

from _harness import parse
from _residual_mlp import against_float64

args = parse(__doc__, variant="the middle block's LayerNorm has eps=1e-2")
against_float64(args, blocks=3, steps=1, eps=(1, 1e-2))

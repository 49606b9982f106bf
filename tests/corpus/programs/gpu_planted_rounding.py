"""On a GPU: a compiled stack of three residual blocks (LayerNorm, Linear, GELU)
trained one AdamW step; with --variant the middle block rounds its
activation to a grid of 1/64 (a planted precision bug that Inductor
fuses into the block's kernel): the same model otherwise, so the first
place the two programs differ is the kernel that rounds. Recorded with
samples; a float64 run of the model without the bug says how far each
run is off. On a GPU Inductor also moves the Linear's bias out of its
matmul into the rounding block's kernel, which then reads a tensor only
run B materializes (the matmul's output without the bias)."""

from _harness import parse
from _residual_mlp import planted_rounding

args = parse(__doc__, variant="the middle block rounds its activation to 1/64")
planted_rounding(args, device="cuda")

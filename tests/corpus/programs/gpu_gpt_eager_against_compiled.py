"""Eager against compiled on a GPU: the small GPT (two transformer blocks:
causal attention through scaled_dot_product_attention and a GELU MLP)
trained three AdamW steps in float32 (TF32 off, torch's default), eagerly
in run A and compiled in run B (--variant). Recorded with samples; a
float64 run of the same model says by how much each run is off."""

from _gpt import eager_against_compiled
from _harness import parse

args = parse(__doc__, variant="compile the model")
eager_against_compiled(args, device="cuda")

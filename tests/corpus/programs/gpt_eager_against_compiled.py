"""Eager against compiled on the CPU: the small GPT (two blocks of causal
attention and a GELU MLP) trained three AdamW steps in float32 on two
threads, eagerly in run A and compiled in run B (--variant). Recorded
with samples; a float64 run of the same model says by how much each run
is off."""

from _gpt import eager_against_compiled
from _harness import parse

args = parse(__doc__, variant="compile the model")
eager_against_compiled(args)

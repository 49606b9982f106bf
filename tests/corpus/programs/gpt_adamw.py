"""A small GPT (token and position embeddings, causal attention through
scaled_dot_product_attention, layer norms, a GELU MLP) trained for three
steps with AdamW, compiled, on two threads: 64 tokens over a vocabulary
of 96, so the embedding's gradient rarely sums two rows."""

from _gpt import training
from _harness import parse, run

run(parse(__doc__), training(vocab=96, batch=4))

"""The small GPT of gpt_adamw on a GPU in fp32 (attention through
scaled_dot_product_attention's memory-efficient kernel), three AdamW
steps: 128 tokens over a vocabulary of 2,048, so the embedding gradient's
atomic adds rarely sum three values into one row."""

from _gpt import training
from _harness import parse, run

run(parse(__doc__), training(vocab=2048, batch=8, device="cuda"))

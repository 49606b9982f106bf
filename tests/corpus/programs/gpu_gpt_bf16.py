"""The small GPT of gpt_adamw on a GPU, its forward under bf16 autocast
(flash attention), fp32 parameters and AdamW state, three steps: 128
tokens over a vocabulary of 2,048, so the embedding gradient's atomic
adds rarely sum three values into one row."""

import torch
from _gpt import training
from _harness import parse, run

run(parse(__doc__), training(vocab=2048, batch=8, device="cuda", autocast=torch.bfloat16))

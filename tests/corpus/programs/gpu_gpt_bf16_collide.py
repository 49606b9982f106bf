"""The small GPT of gpt_adamw on a GPU under bf16 autocast, trained on
1,024 tokens over a vocabulary of 8: the compiled embedding backward sums
many rows per token with atomic adds, so its sums depend on their order."""

import torch
from _gpt import training
from _harness import parse, run

run(parse(__doc__), training(vocab=8, batch=64, device="cuda", autocast=torch.bfloat16))

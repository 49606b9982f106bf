"""The small GPT of gpt_adamw on a GPU in fp32, trained on 1,024 tokens
over a vocabulary of 8: the compiled embedding backward sums many rows per
token with atomic adds, so its float sums depend on the order they land."""

from _gpt import training
from _harness import parse, run

run(parse(__doc__), training(vocab=8, batch=64, device="cuda"))

"""A compiled MLP called once unrecorded, then twice more in one process
under two ``record()`` blocks (run A, run B), under ``no_grad``, each
output kept in a variable: the three outputs are equal bit for bit. At
the end of block B one more tensor is alive than at the end of block A
(block A's kept output), of the same view as the last layer's bias."""

import torch
from _blocks import compiled_mlp, named
from _harness import parse, run_blocks

args = parse(__doc__, blocks=True)
model, compiled, x, warm = compiled_mlp()


def block() -> dict[str, torch.Tensor]:
    return named(model, out=compiled(x))


with torch.no_grad():
    run_blocks(args, block, block)

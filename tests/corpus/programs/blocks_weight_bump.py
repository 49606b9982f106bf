"""The compiled MLP of blocks_identical called in two ``record()`` blocks
of one process (run A, run B), with one weight of the middle layer
changed by 1e-3 between the blocks, outside both: the second block's
output differs, and only through that weight."""

import torch
from _blocks import compiled_mlp, named
from _harness import parse, run_blocks

args = parse(__doc__, blocks=True)
model, compiled, x, warm = compiled_mlp()


def block() -> dict[str, torch.Tensor]:
    return named(model, out=compiled(x))


with torch.no_grad():
    # A weight whose input (after the first ReLU) is not zero, in a row
    # whose output passes the second ReLU: the change reaches the output.
    hidden = torch.relu(model[0](x))
    column = int(hidden.argmax())
    row = int(model[2](hidden).argmax())

    def bump() -> None:
        model[2].weight[row, column] += 1e-3

    run_blocks(args, block, block, between=bump)

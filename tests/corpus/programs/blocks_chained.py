"""A compiled two-branch model called in two ``record()`` blocks of one
process (run A, run B): its first branch reads a fixed input, its second
the state ``h``, which each block replaces by the branch's output (block
B reads what block A kept). The first branch's output is equal in both
blocks; the second branch's input differs, and so does everything that
follows from it."""

import torch
from _harness import parse, run_blocks

args = parse(__doc__, blocks=True)
torch.manual_seed(0)
fixed = torch.nn.Linear(32, 32)
recurrent = torch.nn.Linear(32, 32)


def step(x: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.tanh(fixed(x)), torch.tanh(recurrent(h))


compiled = torch.compile(step)
g = torch.Generator().manual_seed(1)
x, h = torch.randn(8, 32, generator=g), torch.randn(8, 32, generator=g)
state = {"h": h}
with torch.no_grad():
    warm = compiled(x, h)

    def block() -> dict[str, torch.Tensor]:
        y, state["h"] = compiled(x, state["h"])
        return {"y": y, "h": state["h"]}

    run_blocks(args, block, block)

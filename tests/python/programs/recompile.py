"""A compiled function with a data-dependent branch (a graph break),
called on a batch of 8; with a second argument, then on a batch of 16,
which recompiles it (its guard on the batch size fails). Records to
argv[1]."""

import sys

import torch
import tritontui


@torch.compile
def step(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    if x.sum() > 0:
        y = y + 1
    return y.sin()


with tritontui.record(sys.argv[1]):
    step(torch.ones(8))
    if len(sys.argv) > 2:
        step(torch.ones(16))

"""What the CPU cpp_wrapper pairs share: an index_add with colliding
indices (its atomic adds on two threads sum in another order from run to
run), compiled with ``torch._inductor.config.cpp_wrapper = True``."""

from collections.abc import Callable

import torch
import torch._inductor.config


def compiled_index_add() -> Callable[[], torch.Tensor]:
    """The compiled graph, called on the same inputs at each call."""
    torch._inductor.config.cpp_wrapper = True
    torch.manual_seed(0)
    n = 1 << 20
    src = torch.randn(n)
    index = torch.randint(0, 64, (n,))
    f = torch.compile(lambda src, index: torch.zeros(64).index_add(0, index, src) * 2)
    return lambda: f(src, index)

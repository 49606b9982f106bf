"""A compiled function that leaves one call eager: a draw from a
generator of its own, in a helper Dynamo is told not to compile. The
helper's op runs while Dynamo's frame callback is on, so anything Python
the recorder ran for it (describing the generator) Dynamo compiled too:
two more frames and a graph the unrecorded program has not."""

import torch

generator = torch.Generator().manual_seed(0)


@torch._dynamo.disable(recursive=False)
def draw(x: torch.Tensor) -> torch.Tensor:
    return x + torch.randn(x.shape, generator=generator)


@torch.compile
def f(x: torch.Tensor) -> torch.Tensor:
    return draw(x.sin()).cos()


x = torch.randn(64)
print(f(f(x)).sum().item())

"""A compiled forward and backward whose forward has an atomic index_add
(colliding indices, two threads): its result is saved for the backward
pass, which reads it through a transposed view in a matmul. What the
index_add programs of the corpus share."""

from collections.abc import Callable

import torch
from _harness import state


def forward_backward(scale: float, device: str = "cpu") -> Callable[[], dict[str, torch.Tensor]]:
    """The program on ``device``, its source values multiplied by ``scale``."""
    torch.manual_seed(0)
    n, bins, width = 1 << 16, 16, 32
    index = torch.randint(0, bins, (n,)).to(device)
    src = (torch.randn(n, width) * scale).to(device)
    proj = torch.nn.Linear(width, width).to(device)

    def forward(src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        pooled = torch.zeros(bins, width, device=src.device).index_add(0, index, src)
        hidden = proj(pooled)
        return (hidden.t() @ pooled).tanh().sum()

    f = torch.compile(forward)

    def main() -> dict[str, torch.Tensor]:
        loss = f(src, index)
        loss.backward()
        return {"loss": loss.detach(), **state(proj)}

    return main

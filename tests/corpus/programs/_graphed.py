"""A residual MLP compiled with ``mode="reduce-overhead"`` (CUDA graph
trees: its forward and backward are each warmed up, captured once and
replayed at every later step) and trained with Adam. What the
``gpu_graphed_*`` programs of the corpus share."""

from collections.abc import Callable

import torch
from _harness import state


def graphed_training(
    atomic: bool, steps: int = 4, mode: str | None = "reduce-overhead"
) -> Callable[[], dict[str, torch.Tensor]]:
    """The program: its forward pools 65,536 rows into 16 bins, by an
    atomic index_add when ``atomic``, else by a sum over a view; compiled
    with ``mode`` (None: without CUDA graphs)."""
    torch.manual_seed(0)
    n, bins, width = 1 << 16, 16, 64
    index = torch.randint(0, bins, (n,), device="cuda")
    src = torch.randn(n, width, device="cuda")
    model = torch.nn.Sequential(
        torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, width)
    ).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def forward(src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        if atomic:
            pooled = torch.zeros(bins, width, device=src.device).index_add(0, index, src)
        else:
            pooled = src.view(bins, -1, width).sum(1)
        hidden = pooled + model(pooled)
        return hidden.square().mean()

    f = torch.compile(forward, mode=mode)

    def main() -> dict[str, torch.Tensor]:
        losses = []
        for _ in range(steps):
            torch.compiler.cudagraph_mark_step_begin()
            loss = f(src, index)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            # A graph's output is overwritten by its next replay: kept by value.
            losses.append(loss.detach().clone())
        return {"loss": torch.stack(losses), **state(model, optimizer)}

    return main

"""A hand-written CUDA graph whose output the program keeps across
replays: three steps of a compiled function and a cuBLAS matmul, each
step's output kept in a list and the list stacked after the last step.

Captured with ``torch.cuda.graph`` (``graphed``), every replay writes the
same static output, so a list of that tensor holds the last replay's
bytes three times: the common bug of keeping a graph's output without
cloning it. ``cloned`` keeps a clone of each replay's output (the fix);
``ungraphed`` runs the same steps (the input copied into the same static
input) without a graph, each into a fresh output. The last two give the
same bits; the first does not."""

from __future__ import annotations

from collections.abc import Callable

import torch

MODES = ("graphed", "cloned", "ungraphed")


def kept_outputs(mode: str) -> Callable[[], dict[str, torch.Tensor]]:
    """Compiles and warms the step up (outside any recording); returns the
    three steps in ``mode``, which return the stacked outputs."""
    assert mode in MODES, mode
    torch.manual_seed(0)
    w = torch.randn(256, 256, device="cuda")
    inputs = [torch.randn(256, 256, device="cuda") * (s + 1) for s in range(3)]
    f = torch.compile(lambda x: (x * 2).sin())
    static_x = torch.zeros(256, 256, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            f(static_x) @ w
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()

    def main() -> dict[str, torch.Tensor]:
        kept = []
        if mode == "ungraphed":
            for x in inputs:
                static_x.copy_(x)
                kept.append(f(static_x) @ w)
        else:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_y = f(static_x) @ w
            for x in inputs:
                static_x.copy_(x)
                graph.replay()
                kept.append(static_y.clone() if mode == "cloned" else static_y)
        return {"stacked": torch.stack(kept)}

    return main

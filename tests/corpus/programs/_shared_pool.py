"""Two CUDA graphs captured from one memory pool and replayed in another
order than captured: graph 1 (a compiled sin, whose output it frees
inside the capture, and a cuBLAS mm) is captured first, graph 2 (a
compiled cos) second, from graph 1's pool, where it gets the block graph
1's freed intermediate had. The program replays graph 2, keeps its
output, then replays graph 1, whose intermediate overwrites it, and
stacks both outputs (``graphed``). ``ungraphed`` runs the same steps
without graphs, and its stack holds what the program meant."""

from __future__ import annotations

from collections.abc import Callable

import torch


def shared_pool(mode: str) -> tuple[Callable[[], dict[str, torch.Tensor]], dict[str, bool]]:
    """Compiles and warms the steps up (outside any recording); returns the
    steps in ``mode``, which return the stacked outputs, and a dict whose
    ``reused`` they set: whether graph 2's output took graph 1's freed
    intermediate's memory."""
    assert mode in ("graphed", "ungraphed"), mode
    torch.manual_seed(0)
    w = torch.randn(256, 256, device="cuda")
    x = torch.randn(256, 256, device="cuda")
    x2 = torch.randn(256, 256, device="cuda")
    f = torch.compile(lambda x: (x * 2).sin())
    f2 = torch.compile(lambda x: (x * 3).cos())
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            f(x) @ w
            f2(x2)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    seen = {"reused": False}

    def main() -> dict[str, torch.Tensor]:
        if mode == "ungraphed":
            kept = f2(x2)
            y1 = f(x) @ w
            return {"stacked": torch.stack([y1, kept])}
        g1 = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g1):
            t = f(x)
            freed = t.data_ptr()
            y1 = t @ w
            del t
        g2 = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g2, pool=g1.pool()):
            y2 = f2(x2)
        seen["reused"] = y2.data_ptr() == freed
        g2.replay()
        kept = y2
        g1.replay()
        return {"stacked": torch.stack([y1, kept])}

    return main, seen

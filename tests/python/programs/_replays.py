"""CUDA graph replays counted as torch makes them, for the test programs."""

import torch


def count_replays() -> dict[str, int]:
    """Counts every ``torch.cuda.CUDAGraph.replay`` from now on, in the
    returned dict's ``"replays"`` (call it before recording starts, so that
    the count is torch's own, not the recorder's)."""
    counted = {"replays": 0}
    replay = torch.cuda.CUDAGraph.replay

    def counting(self: torch.cuda.CUDAGraph) -> None:
        counted["replays"] += 1
        replay(self)

    torch.cuda.CUDAGraph.replay = counting
    return counted

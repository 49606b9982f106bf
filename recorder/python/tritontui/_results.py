"""The program's results as recording stops: every tensor Python can
still reach (parameters and their gradients, optimizer state, buffers,
outputs the program holds), so that tritontui can tell a difference that
reaches them from one absorbed on the way (docs/trace-format.md,
``results``)."""

from __future__ import annotations

import gc
import sys

import torch

from . import _tensors


def live_tensors() -> list[torch.Tensor]:
    """Each distinct live tensor view once, with leaf tensors' gradients
    (which exist in Python only once asked for) and the tensors behind
    live numpy arrays."""
    seen: set[tuple[object, ...]] = set()
    out: list[torch.Tensor] = []

    def add(t: torch.Tensor) -> None:
        if not _tensors.is_hashable(t) or t.numel() == 0:
            return
        key = (t.device, t.data_ptr(), t.dtype, tuple(t.shape), tuple(t.stride()))
        if key not in seen:
            seen.add(key)
            out.append(t)

    ndarray = getattr(sys.modules.get("numpy"), "ndarray", None)
    # Exact type checks only: isinstance() on an arbitrary object can run
    # its code (a dead weak proxy raises, a deprecated alias warns).
    for obj in gc.get_objects():
        if type(obj) is torch.Tensor or type(obj) is torch.nn.Parameter:
            add(obj)
            if obj.is_leaf and obj.requires_grad and obj.grad is not None:
                add(obj.grad)
        elif ndarray is not None and type(obj) is ndarray:
            # `Tensor.numpy()` shares the tensor's memory: its base.
            base = obj.base
            if type(base) is torch.Tensor:
                add(base)
    return out


def by_device(tensors: list[torch.Tensor]) -> dict[int, list[torch.Tensor]]:
    """The tensors grouped by device ordinal (-1 for the CPU)."""
    groups: dict[int, list[torch.Tensor]] = {}
    for t in tensors:
        groups.setdefault(-1 if t.device.type == "cpu" else t.device.index, []).append(t)
    return groups

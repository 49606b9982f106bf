"""Waits on a collective's ``Work``: what ``Work.wait`` runs on the waiting
thread is the rest of the collective, not the program's work. gloo's
reduce-scatter, for one, reduces into a buffer of its own and copies the
caller's share out of it in ``wait``, as a dispatched ``copy_`` reading
memory no recorded launch wrote. ``Work.wait`` is wrapped so that the
thread counts as inside a launch while it waits: the aten mode records
nothing of it. (The collective itself is recorded, its results hashed
once it is complete: ``hooks.aten.wait_for_collective``.)"""

from __future__ import annotations

import functools
from typing import Any

from .. import _active

_ORIGINAL: Any = None


def _work_class() -> Any:
    """``torch._C._distributed_c10d.Work``, or None without torch.distributed."""
    import torch

    c10d = getattr(torch._C, "_distributed_c10d", None)
    return getattr(c10d, "Work", None)


def install() -> None:
    """Wraps ``Work.wait``."""
    global _ORIGINAL
    work = _work_class()
    if _ORIGINAL is not None or work is None:
        return
    original = work.wait

    @functools.wraps(original)
    def wait_unrecorded(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _active.inside_launch():
            return original(self, *args, **kwargs)

    _ORIGINAL = original
    work.wait = wait_unrecorded


def uninstall() -> None:
    global _ORIGINAL
    work = _work_class()
    if _ORIGINAL is None or work is None:
        return
    work.wait = _ORIGINAL
    _ORIGINAL = None

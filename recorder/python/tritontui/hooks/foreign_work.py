"""Calls whose work is torch's own, not the program's: while one runs, the
thread counts as inside a launch, so the aten mode records nothing of it.

* Dynamo's frame compiler (``convert_frame._compile``). torch.compile
  leaves the aten mode on the stack; most of a compile sets it aside,
  but DDP's graph splitter, for one, compiles each bucket's submodule
  with it in place, on fake tensors and on real ones.
* A collective's ``Work.wait``: what it runs on the waiting thread is the
  rest of the collective. gloo's reduce-scatter reduces into a buffer of
  its own and copies the caller's share out of it there, as a dispatched
  ``copy_`` reading memory no recorded launch wrote. (The collective
  itself is recorded, its results hashed once it is complete:
  ``hooks.aten.wait_for_collective``.)"""

from __future__ import annotations

import functools
from typing import Any

from .. import _active

# The wrapped calls while installed: (owner, attribute, original).
_WRAPPED: list[tuple[Any, str, Any]] = []


def _targets() -> list[tuple[Any, str]]:
    """The calls to wrap that this torch has, as (owner, attribute)."""
    import torch

    targets = []
    try:
        from torch._dynamo import convert_frame

        targets.append((convert_frame, "_compile"))
    except ImportError:
        pass
    work = getattr(getattr(torch._C, "_distributed_c10d", None), "Work", None)
    if work is not None:
        targets.append((work, "wait"))
    return targets


def _unrecorded(original: Any) -> Any:
    """``original``, run with the thread inside a launch."""

    @functools.wraps(original)
    def unrecorded(*args: Any, **kwargs: Any) -> Any:
        with _active.inside_launch():
            return original(*args, **kwargs)

    return unrecorded


def install() -> None:
    """Wraps each call so that its work is not recorded."""
    if _WRAPPED:
        return
    for owner, name in _targets():
        original = getattr(owner, name)
        setattr(owner, name, _unrecorded(original))
        _WRAPPED.append((owner, name, original))


def uninstall() -> None:
    while _WRAPPED:
        owner, name, original = _WRAPPED.pop()
        setattr(owner, name, original)

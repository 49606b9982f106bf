"""Calls whose work is torch's own, not the program's: while one runs, the
thread counts as inside a launch, so the aten mode records nothing of it.

* Dynamo's frame compiler (``convert_frame._compile``). Dynamo compiles
  a frame with every dispatch mode off the stack, except where DDP's
  graph splitter takes over the frame (``CatchErrorsWrapper`` hands it
  to the DDP optimizer without ``_disable_current_modes``): its bucket
  submodules run on fake tensors and on real ones, and its guards take
  in the mode's dispatch keys (``Python``, ``PythonTLSSnapshot``). The
  aten mode is taken off the stack there too, so that every compile
  sees the stack the program alone would have given it.
* AOTAutograd's lazy compile of a backward graph, at the first backward
  call (``track_graph_compiling`` in ``runtime_wrappers``): Inductor's
  compile runs real ops there (the RNG state saved around it, inputs it
  benchmarks with), which a dispatch mode never sees and the native
  observer must not record.
* A collective's ``Work.wait``: what it runs on the waiting thread is the
  rest of the collective. gloo's reduce-scatter reduces into a buffer of
  its own and copies the caller's share out of it there, as a dispatched
  ``copy_`` reading memory no recorded launch wrote. (The collective
  itself is recorded, its results hashed once it is complete:
  ``hooks.aten.wait_for_collective``.)"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

from .. import _active
from . import aten, methods

# The wrapped calls while installed: (owner, attribute, original).
_WRAPPED: list[tuple[Any, str, Any]] = []


def _targets() -> list[tuple[Any, str, Any]]:
    """The calls to wrap that this torch has, as (owner, attribute, wrap)."""
    import torch

    targets = []
    try:
        from torch._dynamo import convert_frame

        targets.append((convert_frame, "_compile", _compiled_without_the_mode))
    except ImportError:
        pass
    try:
        from torch._functorch._aot_autograd import runtime_wrappers

        if hasattr(runtime_wrappers, "track_graph_compiling"):
            targets.append((runtime_wrappers, "track_graph_compiling", _compiling_unrecorded))
    except ImportError:
        pass
    work = getattr(getattr(torch._C, "_distributed_c10d", None), "Work", None)
    if work is not None:
        targets.append((work, "wait", _unrecorded))
    return targets


def _unrecorded(original: Any) -> Any:
    """``original``, run with the thread inside a launch."""

    @functools.wraps(original)
    def unrecorded(*args: Any, **kwargs: Any) -> Any:
        with _active.inside_launch():
            return original(*args, **kwargs)

    return unrecorded


def _compiling_unrecorded(original: Any) -> Any:
    """``original`` (a context manager around a graph's compile), entered
    with the thread inside a launch."""

    @functools.wraps(original)
    @contextlib.contextmanager
    def compiling(*args: Any, **kwargs: Any) -> Iterator[None]:
        with _active.inside_launch(), original(*args, **kwargs):
            yield

    return compiling


def _compiled_without_the_mode(original: Any) -> Any:
    """``original`` (Dynamo's frame compiler), run with the thread inside
    a launch and the aten mode off the stack when it is on top."""
    from torch.utils._python_dispatch import _get_current_dispatch_mode, _pop_mode_temporarily

    @functools.wraps(original)
    def compiled(*args: Any, **kwargs: Any) -> Any:
        with _active.inside_launch():
            if not isinstance(_get_current_dispatch_mode(), aten.AtenRecorder):
                return original(*args, **kwargs)
            with _pop_mode_temporarily():
                return original(*args, **kwargs)

    return compiled


def install() -> None:
    """Wraps each call so that its work is not recorded."""
    if _WRAPPED:
        return
    for owner, name, wrap in _targets():
        original = getattr(owner, name)
        wrapped = wrap(original)
        setattr(owner, name, methods.method(wrapped) if isinstance(owner, type) else wrapped)
        _WRAPPED.append((owner, name, original))


def uninstall() -> None:
    while _WRAPPED:
        owner, name, original = _WRAPPED.pop()
        setattr(owner, name, original)

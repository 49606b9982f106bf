"""Buffer allocations that Inductor's generated wrapper makes outside the
dispatcher (``empty_strided_cpu``, ``empty_strided_cuda``: direct calls
into ``torch._C._dynamo.guards``), which the aten recorder cannot see.

Each becomes a launch of a kernel marked ``allocates`` (recorded by a
native proxy, ``_native.AllocationHook``, with no Python frame per
buffer), like the aten recorder's ``empty`` ops, so that a reused address starts a new life:
bytes read from it before any write are uninitialized, not the output of
whatever op last used that memory. Recorded with the aten ops (the
session's ``aten`` option), whose ``empty`` allocations they stand beside."""

from __future__ import annotations

import sys
from typing import Any

from .. import _native

# The wrapper's allocation globals that bypass the dispatcher.
NAMES = ("empty_strided_cpu", "empty_strided_cpu_pinned", "empty_strided_cuda")


def proxy(name: str, allocate: Any) -> Any:
    """A native callable that runs ``allocate`` and records each buffer it
    hands out into the session recording then."""
    return _native.AllocationHook(name, allocate, sys.modules[__name__])


def is_proxy(value: Any) -> bool:
    return isinstance(value, _native.AllocationHook)


def kernel(session: Any, name: str) -> int | None:
    """The kernel of allocator ``name`` in ``session``, or None when the
    session records no allocations (aten ops off, or a kernel filter that
    leaves it out). Asked once per session by the native proxy."""
    if not session.options.aten or not session.wants(name):
        return None
    return session.kernel_id(
        ("alloc", name),
        lambda: {
            "name": name,
            "backend": "aten",
            "args": [{"name": "result", "type": "", "access": "out"}],
            "source": None,
            "meta": {"allocates": True},
            "config": {},
        },
    )

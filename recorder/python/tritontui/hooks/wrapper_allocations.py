"""Buffer allocations that Inductor's generated wrapper makes outside the
dispatcher (``empty_strided_cpu``, ``empty_strided_cuda``: direct calls
into ``torch._C._dynamo.guards``), which the aten recorder cannot see.

Each becomes a launch of a kernel marked ``allocates``, like the aten
recorder's ``empty`` ops, so that a reused address starts a new life:
bytes read from it before any write are uninitialized, not the output of
whatever op last used that memory. Recorded with the aten ops (the
session's ``aten`` option), whose ``empty`` allocations they stand beside."""

from __future__ import annotations

from typing import Any

from .. import _active

# The wrapper's allocation globals that bypass the dispatcher.
NAMES = ("empty_strided_cpu", "empty_strided_cpu_pinned", "empty_strided_cuda")


class Allocation:
    """Records each buffer one of the wrapper's allocators hands out."""

    def __init__(self, name: str, allocate: Any) -> None:
        self.name = name
        self.allocate = allocate

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        buffer = self.allocate(*args, **kwargs)
        session = _active.active()
        if (
            session is None
            or not session.aten
            or _active.in_launch()
            or not session.wants(self.name)
        ):
            return buffer
        try:
            described = session.describe([], b"", hash_pre=False)
            session.extend(described, [buffer], b"a")
            kernel = session.kernel_id(("alloc", self.name), self._definition)
            session.launch(kernel, [], 0, described)
        except Exception as e:
            session.fail(e)
        return buffer

    def _definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "backend": "aten",
            "args": [{"name": "result", "type": "", "access": "out"}],
            "source": None,
            "meta": {"allocates": True},
            "config": {},
        }

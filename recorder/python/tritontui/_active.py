"""Which session is recording, and whether this thread is inside a
recorded launch: the state every hook reads. A leaf: it imports nothing
of the package but the native module, so the session and the hooks can
both import it."""

from __future__ import annotations

import sys
import threading
from typing import Any

from . import _native

# The session recording now.
_ACTIVE: Any = None
# Guards starting and stopping a session.
LOCK = threading.RLock()


def active() -> Any:
    """The session recording now, if any."""
    return _ACTIVE


def set_active(session: Any) -> None:
    """Makes ``session`` (or None) the one recording now; hold ``LOCK``."""
    global _ACTIVE
    _ACTIVE = session


class inside_launch:
    """Marks the current thread as running a recorded launch (or the
    recorder's own work): torch ops and host reads in it are not recorded."""

    def __enter__(self) -> None:
        _native.enter_launch()

    def __exit__(self, *exc: object) -> None:
        _native.leave_launch()


def in_launch() -> bool:
    """Whether this thread is inside a recorded launch (counted per thread
    by the native half, which the native hooks share): whatever torch
    does inside one (the Triton interpreter's copies, say) belongs to it."""
    return _native.in_launch()


# torch's ``set_eval_frame``, found at the first use once torch has it
# (kept: a hook turns Dynamo off around its work at every call).
_SET_EVAL_FRAME: Any = None


def _set_eval_frame() -> Any:
    """``torch._C._dynamo.eval_frame.set_eval_frame``, or None before
    torch (or a torch without it) is imported."""
    global _SET_EVAL_FRAME
    torch_c = getattr(sys.modules.get("torch"), "_C", None)
    dynamo = getattr(torch_c, "_dynamo", None)
    _SET_EVAL_FRAME = getattr(getattr(dynamo, "eval_frame", None), "set_eval_frame", None)
    return _SET_EVAL_FRAME


class dynamo_off:
    """Turns Dynamo's frame callback off on this thread for the recorder's
    own work in a Python hook, as the native hooks do
    (``recorder/src/python/dynamo_off.rs``): while a compiled function runs
    the parts it left eager, Dynamo looks at every frame that starts, the
    standard library's the recorder calls (``json.dumps``) among them.
    The hook's own frames are on Dynamo's skip list already."""

    __slots__ = ("prior",)

    def __enter__(self) -> None:
        set_eval_frame = _SET_EVAL_FRAME or _set_eval_frame()
        self.prior = set_eval_frame(None) if set_eval_frame is not None else None

    def __exit__(self, *exc: object) -> None:
        if self.prior is not None:
            _SET_EVAL_FRAME(self.prior)

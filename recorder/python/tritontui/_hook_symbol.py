"""The native extension's symbols made global, once per process.

Code that Inductor generates with the recorder's C++-wrapper hooks
declares the hook (``tritontui_launch``) as a weak symbol, resolved when
its module is loaded: only modules loaded after the extension's symbols
became global find it. Python loads extensions with local symbols, so
the package promotes its own as soon as it is imported."""

from __future__ import annotations

import contextlib
import ctypes
import os

from . import _native

_DONE = {"promoted": False}


def make_global() -> None:
    """Makes the extension's symbols visible to every module loaded from
    now on (a no-op after the first call)."""
    if _DONE["promoted"]:
        return
    _DONE["promoted"] = True
    # A platform without these flags keeps the symbols local: hooked
    # graphs then reach no hook, and the recorder says they ran unrecorded.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(_native.__file__, mode=os.RTLD_GLOBAL | os.RTLD_NOLOAD | os.RTLD_NOW)

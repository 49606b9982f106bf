"""Compiles: what torch.compile runs while it compiles a frame is its own
work, not the program's. Dynamo's ``convert_frame._compile`` is wrapped so
that the thread counts as inside a launch for the whole compile: the aten
mode, which torch.compile leaves on the stack, then records nothing of it.
(Most of a compile runs with the mode set aside; DDP's graph splitter, for
one, compiles each bucket's submodule with it in place, on fake tensors
and on real ones.)"""

from __future__ import annotations

import functools
from typing import Any

from .. import _active

_ORIGINAL: Any = None


def install() -> None:
    """Wraps dynamo's frame compiler."""
    global _ORIGINAL
    if _ORIGINAL is not None:
        return
    try:
        from torch._dynamo import convert_frame
    except ImportError:
        return
    original = convert_frame._compile

    @functools.wraps(original)
    def compile_unrecorded(*args: Any, **kwargs: Any) -> Any:
        with _active.inside_launch():
            return original(*args, **kwargs)

    _ORIGINAL = original
    convert_frame._compile = compile_unrecorded


def uninstall() -> None:
    global _ORIGINAL
    if _ORIGINAL is None:
        return
    from torch._dynamo import convert_frame

    convert_frame._compile = _ORIGINAL
    _ORIGINAL = None

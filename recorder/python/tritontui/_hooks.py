"""Installs and removes every hook into torch at once."""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

from . import (
    _aten,
    _compile_hook,
    _cpp_hook,
    _graph_hook,
    _host_reads,
    _triton_hook,
    _user_triton_hook,
)

_ATEN_MODE: _aten.AtenRecorder | None = None


def install(session: Any) -> None:
    global _ATEN_MODE
    _triton_hook.install(session)
    _user_triton_hook.install()
    _cpp_hook.install()
    _graph_hook.install()
    _compile_hook.install(session)
    if session.aten:
        _host_reads.install()
        _ATEN_MODE = _aten.AtenRecorder(session)
        _ATEN_MODE.__enter__()


def uninstall() -> None:
    global _ATEN_MODE
    mode, _ATEN_MODE = _ATEN_MODE, None
    if mode is not None:
        # Left on another thread's stack or already popped: it records
        # nothing once the session is gone.
        with contextlib.suppress(Exception):
            mode.__exit__(None, None, None)
    _triton_hook.uninstall()
    _user_triton_hook.uninstall()
    _cpp_hook.uninstall()
    _graph_hook.uninstall()
    _host_reads.uninstall()
    _compile_hook.uninstall()


def disable_cuda_graphs() -> bool:
    """CUDA graph replays launch kernels no hook can see: turn them off
    while recording. Returns whether they were on."""
    try:
        import torch._inductor.config as config
    except Exception:
        return False
    if not config.triton.cudagraphs:
        return False
    config.triton.cudagraphs = False
    warnings.warn(
        "tritontui: CUDA graphs are turned off while recording, so every launch can be seen",
        RuntimeWarning,
        stacklevel=3,
    )
    return True

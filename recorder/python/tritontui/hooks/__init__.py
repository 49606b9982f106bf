"""The hooks into torch, one module each, installed and removed together.

The C++, user-Triton, graph-input, wrapper-allocation and host-read hooks
record into the active session (``tritontui._active``), looked up when
they fire, so one left behind by a session that ended records nothing.
The Triton hook and the aten mode are given their session when installed
and record into it alone; the CUDA-graph check is given it to say in it
what it turned off. None of them imports the session module."""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

from . import (
    aten,
    cpp,
    cuda_graphs,
    graph_inputs,
    host_reads,
    triton,
    user_triton,
)

_ATEN_MODE: aten.AtenRecorder | None = None


def install(session: Any) -> None:
    """Installs every hook for ``session`` (aten ops and host reads only
    when it records aten ops)."""
    global _ATEN_MODE
    triton.install(session)
    user_triton.install()
    cpp.install()
    graph_inputs.install()
    cuda_graphs.install(session)
    if session.aten:
        host_reads.install()
        _ATEN_MODE = aten.AtenRecorder(session)
        _ATEN_MODE.__enter__()


def uninstall() -> None:
    """Removes every hook; safe to call twice."""
    global _ATEN_MODE
    mode, _ATEN_MODE = _ATEN_MODE, None
    if mode is not None:
        # Left on another thread's stack or already popped: it records
        # nothing once the session is gone.
        with contextlib.suppress(Exception):
            mode.__exit__(None, None, None)
    triton.uninstall()
    user_triton.uninstall()
    cpp.uninstall()
    graph_inputs.uninstall()
    host_reads.uninstall()
    cuda_graphs.uninstall()


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

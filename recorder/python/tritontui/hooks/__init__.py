"""The hooks into torch, one module each, installed and removed together.

Each hook records into the active session (``tritontui._active``), looked
up when it fires, so a hook left behind by a session that ended records
nothing. The Triton hook, the aten mode and the CUDA-graph check also take
the session when installed: the first two record into that session only,
the last says in it what it turned off."""

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

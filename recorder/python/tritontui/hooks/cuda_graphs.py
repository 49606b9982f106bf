"""CUDA graphs asked for per compile: ``torch.compile(mode="reduce-overhead")``
and ``options={"triton.cudagraphs": True}`` turn them on for one compile,
past the global setting the session turns off. A graph replay launches its
kernels without calling any Python, so no hook would see them: while
recording, such compiles are made without CUDA graphs (with a warning, and
a ``compile`` record saying so)."""

from __future__ import annotations

import os
import warnings
from typing import Any

_ORIGINAL: Any = None
_KEY = "triton.cudagraphs"


def install(session: Any) -> None:
    global _ORIGINAL
    if _ORIGINAL is not None:
        return
    import torch

    wrapper = getattr(torch, "_TorchCompileInductorWrapper", None)
    if wrapper is None:
        return
    original = _ORIGINAL = wrapper.__call__

    def call(self: Any, model_: Any, inputs_: Any) -> Any:
        if not self.config.get(_KEY):
            return original(self, model_, inputs_)
        from torch._inductor.compile_fx import compile_fx

        _say_so(session)
        return compile_fx(model_, inputs_, config_patches={**self.config, _KEY: False})

    wrapper.__call__ = call


def uninstall() -> None:
    global _ORIGINAL
    if _ORIGINAL is None:
        return
    import torch

    torch._TorchCompileInductorWrapper.__call__ = _ORIGINAL
    _ORIGINAL = None


def _say_so(session: Any) -> None:
    warnings.warn(
        "tritontui: this torch.compile asked for CUDA graphs; they are turned off while "
        "recording, so every launch can be seen",
        RuntimeWarning,
        stacklevel=4,
    )
    try:
        session.record_json(
            {
                "r": "compile",
                "event": "graph",
                "name": "torch.compile",
                "pid": os.getpid(),
                "ts": session.now(),
                "info": {"cuda_graphs_disabled": True},
            }
        )
    except Exception as e:
        session.fail(e)

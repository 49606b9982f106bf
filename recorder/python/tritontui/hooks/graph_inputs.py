"""Graph inputs: each call of a compiled graph records its input tensors
under their names in the graph (``primals_1``, ``arg0_1``), so that a
divergent input nobody wrote inside the recorded region can be named."""

from __future__ import annotations

import re
from typing import Any

from .. import _active

_ORIGINAL: Any = None
_UNPACK = re.compile(r"def call\((?:self, )?args\):\s*\n\s*([\w, ]+?)\s*=\s*args\b")
_NAMES: dict[int, list[str]] = {}


def input_names(source_code: str) -> list[str]:
    """Names of the graph's inputs, from ``def call(args): a, b = args``."""
    match = _UNPACK.search(source_code or "")
    if not match:
        return []
    return [n.strip() for n in match.group(1).split(",") if n.strip()]


def install() -> None:
    global _ORIGINAL
    if _ORIGINAL is not None:
        return
    from torch._inductor.output_code import CompiledFxGraph

    _ORIGINAL = CompiledFxGraph.__call__

    def call(self: Any, inputs: Any) -> Any:
        session = _active.active()
        if session is not None:
            try:
                names = _NAMES.get(id(self))
                if names is None:
                    names = _NAMES[id(self)] = input_names(getattr(self, "source_code", ""))
                graph = str(getattr(self, "_fx_graph_cache_key", "") or f"graph@{id(self):x}")
                session.graph_inputs(graph, names, list(inputs))
            except Exception as e:
                session.fail(e)
        return _ORIGINAL(self, inputs)

    CompiledFxGraph.__call__ = call


def uninstall() -> None:
    global _ORIGINAL
    if _ORIGINAL is None:
        return
    from torch._inductor.output_code import CompiledFxGraph

    CompiledFxGraph.__call__ = _ORIGINAL
    _ORIGINAL = None

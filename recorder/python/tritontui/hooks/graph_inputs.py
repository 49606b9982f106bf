"""Graph inputs: each call of a compiled graph records its input tensors
under their names in the graph (``primals_1``, ``arg0_1``), so that a
divergent input nobody wrote inside the recorded region can be named.

A graph compiled with ``torch._inductor.config.cpp_wrapper=True`` launches
its kernels from C++, past every hook: its inputs are recorded, its
launches are not. The first call of such a graph warns once per session
and writes a ``compile`` record (``event: graph``, ``info: {unrecorded:
"cpp_wrapper"}``) naming it."""

from __future__ import annotations

import os
import re
import warnings
from typing import Any

from .. import _active
from . import extern_kernels

_ORIGINAL: Any = None
_UNPACK = re.compile(r"def call\((?:self, )?args\):\s*\n\s*([\w, ]+?)\s*=\s*args\b")
# Each graph's input names, and whether it is a cpp_wrapper graph, by id.
_GRAPHS: dict[int, tuple[list[str], bool]] = {}
# What the Python module of a cpp_wrapper graph loads its C++ entry with.
_CPP_WRAPPER = "CppWrapperCodeCache.load_pybinding"


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
        recorded = False
        if session is not None:
            try:
                extern_kernels.install_pending()
                known = _GRAPHS.get(id(self))
                if known is None:
                    source = getattr(self, "source_code", "") or ""
                    known = _GRAPHS[id(self)] = (input_names(source), _CPP_WRAPPER in source)
                names, cpp_wrapper = known
                graph = str(getattr(self, "_fx_graph_cache_key", "") or f"graph@{id(self):x}")
                if cpp_wrapper and graph not in session.unrecorded_graphs:
                    say_unrecorded(session, graph, "cpp_wrapper")
                session.sample_settings()
                session.graph_inputs(graph, names, list(inputs), all_recorded=not cpp_wrapper)
                recorded = True
            except Exception as e:
                session.fail(e)
        try:
            return _ORIGINAL(self, inputs)
        finally:
            if recorded:
                try:
                    session.graph_call_end()
                except Exception as e:
                    session.fail(e)

    CompiledFxGraph.__call__ = call


def uninstall() -> None:
    global _ORIGINAL
    if _ORIGINAL is None:
        return
    from torch._inductor.output_code import CompiledFxGraph

    CompiledFxGraph.__call__ = _ORIGINAL
    _ORIGINAL = None


# What the warning says of a graph whose launches are not recorded, by why.
_UNSEEN = {
    "cpp_wrapper": "a graph compiled with torch._inductor.config.cpp_wrapper=True launches "
    "its kernels from C++, which the recorder cannot see: its launches are not recorded "
    "(compile without cpp_wrapper to record them)",
    "aot_inductor": "an AOTInductor model launches its kernels from C++, which the recorder "
    "cannot see: its launches are not recorded (run the model under torch.compile to "
    "record them)",
}


def say_unrecorded(session: Any, graph: str, why: str) -> None:
    """Tells the user (once per session) and the trace (once per graph)
    that a graph's launches are not recorded, and why (``cpp_wrapper``,
    ``aot_inductor``): a comparison of the trace then says so."""
    if not session.unrecorded_graphs:
        warnings.warn(f"tritontui: {_UNSEEN[why]}", RuntimeWarning, stacklevel=4)
    session.unrecorded_graphs.add(graph)
    session.record_json(
        {
            "r": "compile",
            "event": "graph",
            "name": graph,
            "pid": os.getpid(),
            "ts": session.now(),
            "info": {"unrecorded": why},
        }
    )

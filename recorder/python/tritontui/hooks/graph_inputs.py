"""Graph inputs: each call of a compiled graph records its input tensors
under their names in the graph (``primals_1``, ``arg0_1``), so that a
divergent input nobody wrote inside the recorded region can be named.

A graph compiled with ``torch._inductor.config.cpp_wrapper=True`` while
recording calls the recorder around each launch (see the cpp_wrapper
hooks). One compiled before recording started launches its kernels from
C++ past every hook: its inputs are recorded, its launches are not. The
first call of such a graph warns once per session and writes a
``compile`` record (``event: graph``, ``info: {unrecorded:
"cpp_wrapper"}``) naming it; so does a hooked graph whose call never
reached the recorder (its module bound no hook)."""

from __future__ import annotations

import re
import warnings
import weakref
from dataclasses import dataclass
from typing import Any

from .. import _active, _fingerprints, _modules
from . import cpp_wrapper, cuda_graphs, extern_kernels, kernel_sites

_ORIGINAL: Any = None
_UNPACK = re.compile(r"def call\((?:self, )?args\):\s*\n\s*([\w, ]+?)\s*=\s*args\b")


@dataclass(frozen=True)
class _Graph:
    """What a compiled graph's calls record, worked out at its first."""

    # The graph itself (an id alone may be reused by a later graph).
    graph: weakref.ref
    # Its name in the trace: its FX-graph cache key.
    name: str
    # Its input names.
    inputs: list[str]
    # Whether its wrapper is C++ (cpp_wrapper), and how many hooked call
    # sites that C++ has.
    in_cpp: bool
    sites: int
    # Whether CUDA graph trees may run it (Inductor kept what they need).
    in_tree: bool
    # The inputs its calls write (indices), fingerprinted with its outputs.
    mutated: tuple[int, ...]

    @classmethod
    def of(cls, compiled: Any) -> _Graph:
        source = getattr(compiled, "source_code", "") or ""
        # Without a cache key, graphs are named by the order of their first
        # calls, the same in two runs of one program.
        name = getattr(compiled, "_fx_graph_cache_key", "") or f"graph#{len(_NAMED)}"
        _NAMED.add(name)
        return cls(
            weakref.ref(compiled),
            str(name),
            input_names(source),
            _CPP_WRAPPER in source,
            cpp_wrapper.hook_sites(source),
            getattr(compiled, "cudagraph_info", None) is not None,
            tuple(sorted(getattr(compiled, "mutated_input_idxs", ()) or ())),
        )


# The graphs called so far, by id.
_GRAPHS: dict[int, _Graph] = {}
# The names given to graphs so far.
_NAMED: set[str] = set()
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
        fingerprinted: list[Any] | None = None
        calls = 0
        if session is not None:
            try:
                extern_kernels.install_pending()
                known = _GRAPHS.get(id(self))
                if known is None or known.graph() is not self:
                    known = _GRAPHS[id(self)] = _Graph.of(self)
                in_cpp, graph = known.in_cpp, known.name
                kernel_sites.record(session, graph)
                if session.fingerprints_now:
                    # The call may empty its list of inputs as it goes.
                    fingerprinted = [inputs[i] for i in known.mutated if i < len(inputs)]
                else:
                    if in_cpp and not known.sites and graph not in session.unrecorded_graphs:
                        say_unrecorded(session, graph, "cpp_wrapper")
                    session.sample_settings()
                    # A C++ wrapper's copies and zeroing are not recorded: its
                    # launches take their hashes before afresh.
                    session.graph_inputs(
                        graph,
                        known.inputs,
                        list(inputs),
                        all_recorded=not in_cpp,
                        may_keep=cuda_graphs.none_from_the_tree if known.in_tree else None,
                    )
                    calls = cpp_wrapper.calls() if in_cpp else 0
                    recorded = True
            except Exception as e:
                session.fail(e)
        if fingerprinted is not None:
            outputs = _ORIGINAL(self, inputs)
            try:
                with _active.dynamo_off():
                    kept = _fingerprints.reaching_the_program(graph, outputs)
                    _fingerprints.graph_call(session, graph, [*kept, *fingerprinted])
            except Exception as e:
                session.fail(e)
            return outputs
        try:
            return _ORIGINAL(self, inputs)
        finally:
            if recorded:
                try:
                    unbound = in_cpp and not cpp_wrapper.call_ended(calls) and known.sites
                    if unbound and graph not in session.unrecorded_graphs:
                        say_unrecorded(session, graph, "cpp_wrapper_unbound")
                    session.graph_call_end()
                except Exception as e:
                    session.fail(e)

    CompiledFxGraph.__call__ = call
    _modules.COMPILED_CALLS.add(call.__code__)


def uninstall() -> None:
    global _ORIGINAL
    if _ORIGINAL is None:
        return
    from torch._inductor.output_code import CompiledFxGraph

    CompiledFxGraph.__call__ = _ORIGINAL
    _ORIGINAL = None


# What the warning says of a graph whose launches are not recorded, by why.
_UNSEEN = {
    "cpp_wrapper": "a graph compiled with torch._inductor.config.cpp_wrapper=True before "
    "recording started launches its kernels from C++ without the recorder's hooks: its "
    "launches are not recorded (start recording before its first call, which then compiles "
    "it with them)",
    "cpp_wrapper_unbound": "a graph compiled with the recorder's cpp_wrapper hooks ran without "
    "calling them (its module was loaded before tritontui was imported): its launches are "
    "not recorded",
    "aot_inductor": "an AOTInductor model that calls none of the recorder's hooks (compiled "
    "without them, or loaded before tritontui was imported) launches its kernels from C++ "
    "unseen: its launches are not recorded (compile the package while recording, or with "
    "tritontui.compile_package, and load it after importing tritontui)",
}


def say_unrecorded(session: Any, graph: str, why: str) -> None:
    """Tells the user (once per session) and the trace (once per graph)
    that a graph's launches are not recorded, and why (``cpp_wrapper``,
    ``aot_inductor``): a comparison of the trace then says so."""
    if not session.unrecorded_graphs:
        warnings.warn(f"tritontui: {_UNSEEN[why]}", RuntimeWarning, stacklevel=4)
    session.unrecorded_graphs.add(graph)
    session.file.compile("graph", graph, {"unrecorded": why})

"""Where in the program's modules each kernel Inductor generates computes
its outputs. Inductor's scheduling hands ``define_kernel`` the scheduler
nodes it fused into one kernel; their buffers' FX origins carry Dynamo's
``nn_module_stack`` (a backward node, the forward's ``fwd_nn_module_stack``).
Each call of ``define_kernel`` is one call site of the graph's wrapper, in
the order the wrapper launches them; its return value is left as it is,
so nothing compiled changes. An extern kernel the wrapper calls (cuBLAS's
``mm``, a fallback op) is a call site too, seen where the scheduler
generates its call (``codegen_extern_call``) and named by its op's packet
(``aten::mm``: which overload runs is known only when it does).

The sites of a graph are known when Inductor names the graph (its FX-graph
cache event, after code generation): they are kept under that key, here
and in a file beside Inductor's cache, so that a later process whose
compile is a cache hit (no code generated) still knows them. At a graph's
first call in a session they are written into the trace as ``kernel_site``
compile records, one per call site in order: the kernel's name, the graph
(its key), the modules of the whole kernel, the aten ops it computes with
their modules and, per output argument, the modules its value was
computed in (the module of the op that wrote it last). A graph compiled
with Inductor's caches off, or before tritontui first recorded it, has
none."""

from __future__ import annotations

import json
import os
import re
import weakref
from typing import Any

from .. import _active

# The sites of the graph whose code is being generated (a weak reference
# to Inductor's GraphLowering), not yet named by its FX-graph cache key.
_PENDING: list[dict[str, Any]] = []
_PENDING_GRAPH: Any = None
# A graph compiled without an FX-graph cache event (caches off) leaves
# its sites pending until the next graph's code is generated: a bound.
_PENDING_KEPT = 100_000
# The sites of each graph by its key.
_KNOWN: dict[str, list[dict[str, Any]]] = {}
# What is wrapped: (class, method name, original).
_WRAPPED: list[tuple[type, str, Any]] = []
# What a graph's key looks like (a file name under the cache directory).
_KEY = re.compile(r"^[\w.-]{1,200}$")
# Modules and values are joined by this in a record (a module path has none).
SEPARATOR = ";"


def install() -> None:
    """Wraps the C++ and Triton schedulings' ``define_kernel`` and the
    scheduler's ``codegen_extern_call``."""
    if _WRAPPED:
        return
    for scheduling in _schedulings():
        original = scheduling.define_kernel
        scheduling.define_kernel = _wrap(original)
        _WRAPPED.append((scheduling, "define_kernel", original))
    try:
        from torch._inductor.scheduler import Scheduler
    except ImportError:
        return
    original = Scheduler.codegen_extern_call
    Scheduler.codegen_extern_call = _wrap_extern(original)
    _WRAPPED.append((Scheduler, "codegen_extern_call", original))


def uninstall() -> None:
    while _WRAPPED:
        owner, method, original = _WRAPPED.pop()
        setattr(owner, method, original)


def _schedulings() -> list[type]:
    found = []
    try:
        from torch._inductor.codegen.cpp import CppScheduling

        found.append(CppScheduling)
    except ImportError:
        pass
    try:
        from torch._inductor.codegen.triton import TritonScheduling

        found.append(TritonScheduling)
    except ImportError:
        pass
    return found


def _wrap(original: Any) -> Any:
    def define_kernel(self: Any, src_code: Any, nodes: Any, *args: Any, **kwargs: Any) -> Any:
        name = original(self, src_code, nodes, *args, **kwargs)
        session = _active.active()
        if session is not None:
            try:
                _pend(_site(self, name, nodes, args, kwargs))
            except Exception as e:
                session.fail(e)
        return name

    return define_kernel


def _wrap_extern(original: Any) -> Any:
    def codegen_extern_call(self: Any, scheduler_node: Any) -> None:
        original(self, scheduler_node)
        session = _active.active()
        if session is not None:
            try:
                site = _extern_site(getattr(scheduler_node, "node", None))
                if site is not None:
                    _pend(site)
            except Exception as e:
                session.fail(e)

    return codegen_extern_call


def _extern_site(node: Any) -> dict[str, Any] | None:
    """The call site of an extern kernel's IR node, named by its op's
    packet (``aten::mm``); None for one that calls no aten op (a
    ``MultiOutput`` picking a result)."""
    name = _packet(getattr(node, "op_overload", None))
    if name is None:
        name = _packet(getattr(getattr(node, "origin_node", None), "target", None))
    if name is None:
        return None
    origins = list(getattr(node, "origins", None) or ())
    return {
        "kernel": name,
        "modules": _modules(origins, last=getattr(node, "origin_node", None)),
        "ops": _ops(origins),
        "args": {},
    }


def _packet(op: Any) -> str | None:
    """``aten::mm`` for ``aten.mm.out`` (an op overload or packet); None
    for anything else (``operator.getitem``)."""
    schema = getattr(op, "_schema", None)
    if schema is not None:
        return str(schema.name)
    qualified = getattr(op, "_qualified_op_name", None)
    return str(qualified) if qualified is not None else None


def _pend(site: dict[str, Any]) -> None:
    """Keeps a site of the graph whose code is being generated (dropping
    those of an earlier graph that no cache event named)."""
    global _PENDING_GRAPH
    from torch._inductor.virtualized import V

    graph = V.graph
    if _PENDING_GRAPH is None or _PENDING_GRAPH() is not graph:
        _PENDING.clear()
        _PENDING_GRAPH = weakref.ref(graph)
    if len(_PENDING) < _PENDING_KEPT:
        _PENDING.append(site)


def _site(scheduling: Any, name: str, nodes: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """One call site: the kernel's name, its modules, its output
    arguments' modules."""
    from torch._inductor.virtualized import V

    kernel_args = _kernel_args(scheduling, args, kwargs)
    written: dict[str, list[Any]] = {}
    origin_nodes: dict[str, Any] = {}
    if kernel_args is not None:
        outputs = {
            buf: arg for buf, arg in kernel_args.output_buffers.items() if isinstance(arg, str)
        }
        for buf, inplaced in kernel_args.inplace_buffers.items():
            inner = getattr(inplaced, "inner_name", None)
            if isinstance(inner, str) and not inner.startswith("REMOVED"):
                outputs[buf] = inner
        # Read from the graph's tables (get_buffer would make a constant's
        # IR node anew).
        buffers = getattr(V.graph, "name_to_buffer", {})
        inputs = getattr(V.graph, "graph_inputs", {})
        for buf, arg in outputs.items():
            ir_node = buffers.get(buf) or inputs.get(buf)
            origins = getattr(ir_node, "origins", None) or ()
            written.setdefault(arg, []).extend(origins)
            origin_node = getattr(ir_node, "origin_node", None)
            if origin_node is not None:
                origin_nodes[arg] = origin_node
    fused = []
    for snode in nodes if isinstance(nodes, list | tuple) else ():
        for inner in snode.get_nodes() if hasattr(snode, "get_nodes") else (snode,):
            fused.extend(getattr(getattr(inner, "node", None), "origins", None) or ())
    return {
        "kernel": str(name),
        "modules": _modules(fused),
        "ops": _ops(fused),
        "args": {
            arg: modules
            for arg, origins in written.items()
            if (modules := _modules(origins, last=origin_nodes.get(arg)))
        },
    }


def _kernel_args(scheduling: Any, args: tuple, kwargs: dict) -> Any:
    """The kernel's arguments: the Triton kernel handed over, or the C++
    scheduling's kernel group's (unless others were handed over)."""
    kernel = kwargs.get("kernel", kwargs.get("kernel_args", args[0] if args else None))
    if kernel is not None and not hasattr(kernel, "output_buffers"):
        kernel = getattr(kernel, "args", None)
    if kernel is None:
        kernel = getattr(getattr(scheduling, "kernel_group", None), "args", None)
    return kernel if hasattr(kernel, "output_buffers") else None


def _modules(origins: list[Any], last: Any = None) -> list[str]:
    """The module paths of FX nodes, each once, in the graph's order (that
    of ``last``, the op that wrote the value, moved last)."""
    paths = [p for node in _in_graph_order(origins) if (p := module_of(node)) is not None]
    tail = module_of(last) if last is not None else None
    if tail is not None:
        paths.append(tail)
    seen: dict[str, None] = {}
    for path in reversed(paths):
        seen.setdefault(path)
    return list(reversed(seen))


def _ops(origins: list[Any]) -> list[list[str]]:
    """The aten ops the FX nodes were traced from (before decompositions),
    each with its module, once, in the graph's order: what a kernel
    computes, module by module (an op outside any known module left out)."""
    pairs: dict[tuple[str, str], None] = {}
    for node in _in_graph_order(origins):
        op, module = _op_of(node), module_of(node)
        if op is not None and module is not None:
            pairs.setdefault((module, op))
    return [list(pair) for pair in pairs]


def _op_of(node: Any) -> str | None:
    """``aten.gelu``: the op an FX node was traced from, as Inductor's
    kernel comments name it."""
    if getattr(node, "op", None) != "call_function":
        return None
    original = (getattr(node, "meta", None) or {}).get("original_aten")
    packet = getattr(original, "_overloadpacket", None)
    if packet is not None:
        return str(packet)
    name = getattr(original, "name", None)
    return str(name()) if callable(name) else None


def _in_graph_order(origins: list[Any]) -> list[Any]:
    """FX nodes, each once, in their graph's order (as given where they
    are of several graphs)."""
    unique = list(dict.fromkeys(origins))
    graphs = {id(getattr(n, "graph", None)) for n in unique}
    if len(graphs) > 1 or not all(hasattr(n, "_sort_key") for n in unique):
        return unique
    return sorted(unique, key=lambda n: n._sort_key)


# Dynamo names a module by where the compiled frame found it: the local
# or global holding the root (``L['self']``, ``G['model']``), then attributes.
_ROOT = re.compile(r"^[LG]\[(['\"]).*?\1\]\.?")
_INDEX = re.compile(r"\[(['\"]?)([^\]'\"]*)\1\]")


def module_of(node: Any) -> str | None:
    """The path of the innermost module an FX node was traced in, from the
    compiled frame's root (``layers.1.mlp``; empty for the root itself),
    with its call within the frame where not the first (Dynamo's key's
    ``@1``), as the eager ops' paths are named; None outside any module."""
    meta = getattr(node, "meta", None) or {}
    stack = meta.get("nn_module_stack") or meta.get("fwd_nn_module_stack")
    if not stack:
        return None
    key, source = list(stack.items())[-1]
    source = source[0] if isinstance(source, tuple | list) else source
    path = normalize(str(source))
    call = _CALL.search(str(key))
    return f"{path}@{call.group(1)}" if call and path else path


# Dynamo's key of a module's call after its first within a frame ends in
# ``@`` and the call's index.
_CALL = re.compile(r"@(\d+)$")


def normalize(source: str) -> str:
    """``L['self'].layers[0]._modules['mlp']`` → ``layers.0.mlp``."""
    path = _ROOT.sub("", source, count=1)
    path = _INDEX.sub(r".\2", path).replace("._modules.", ".")
    return path.removeprefix("_modules.").strip(".")


def named(key: str, state: str) -> None:
    """The graph whose code was generated last is named ``key`` (its FX-graph
    cache event, ``state`` ``miss``, ``bypass`` or ``hit``): its sites are
    kept under it, and saved beside Inductor's cache on a miss."""
    sites, _PENDING[:] = list(_PENDING), []
    if state == "hit" or not sites or not _KEY.match(key):
        return
    _KNOWN[key] = sites
    if state == "miss":
        _save(key, sites)


def record(session: Any, graph: str) -> None:
    """Writes the call sites of ``graph`` (its key) into the session's trace,
    once per session, where they are known."""
    if graph in session.sited_graphs:
        return
    session.sited_graphs.add(graph)
    sites = _KNOWN.get(graph)
    if sites is None and _KEY.match(graph):
        sites = _KNOWN[graph] = _load(graph)
    for site in sites or ():
        info = {
            "graph": graph,
            "modules": SEPARATOR.join(site["modules"]),
            "ops": SEPARATOR.join(f"{m}={op}" for m, op in site.get("ops", ())),
        }
        info.update({f"arg.{arg}": SEPARATOR.join(m) for arg, m in site["args"].items()})
        session.file.compile("kernel_site", site["kernel"], info)


def _store(key: str) -> str:
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    return os.path.join(cache_dir(), "tritontui_sites", f"{key}.json")


def _save(key: str, sites: list[dict[str, Any]]) -> None:
    """Saves a graph's sites beside Inductor's cache entry (skipped where
    the directory cannot be written: a later hit then has none)."""
    try:
        path = _store(key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(sites, f)
        os.replace(temporary, path)
    except OSError:
        pass


def _load(key: str) -> list[dict[str, Any]] | None:
    """A graph's sites saved by an earlier compile; None where none was
    saved or what was saved is not what this module saves."""
    try:
        with open(_store(key), encoding="utf-8") as f:
            sites = json.load(f)
    except (OSError, ValueError):
        return None
    valid = isinstance(sites, list) and all(
        isinstance(s, dict)
        and isinstance(s.get("kernel"), str)
        and isinstance(s.get("modules"), list)
        and isinstance(s.get("args"), dict)
        for s in sites
    )
    return sites if valid else None

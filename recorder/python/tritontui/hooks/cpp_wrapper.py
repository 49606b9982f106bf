"""Graphs whose wrapper is C++ (``torch._inductor.config.cpp_wrapper``,
AOTInductor packages), recorded launch by launch.

While recording, Inductor's C++ wrapper codegen is patched to put a call
of ``tritontui_launch`` (a weak ``extern "C"`` symbol, exported by the
recorder's native extension: ``recorder/src/python/cpp_wrapper_hook.rs``)
before and after every call site that launches work:

- the C++ kernels (``cpp_fused_*``) and the Triton kernels;
- the C-shim calls of extern kernels and fallbacks (``aoti_torch_cpu_mm_out``);
- the scatter and ``index_put`` fallbacks, whose view arguments are first
  given names so that the hook can pass them.

Each call passes a *site*: a static string holding the kernel's kind
(``cpp``, ``triton``, ``extern``), its name, one code per value (``i``
read, ``o`` written, ``x`` read and written, ``r`` a tensor the call
returns; ``n`` an integer, ``f`` a float) and the values' names, followed
by the values themselves. A module compiled with the hooks runs as the
stock one when the symbol is absent (no recorder in the process). The
codegen decides each argument's access from what it is: a kernel's
pointer constness and body, Inductor's list of mutated arguments, the
output an extern kernel writes, the buffers a fallback mutates.

The native side (``_native.CppWrapperHook``, bound while a session
records) turns each tensor handle into a Python tensor sharing its
storage and records the launch exactly as the Python wrapper's hooks
would (same describer, same hashes, on the current stream), with no
Python frame of its own; this module gives it what is fixed per site
(:func:`prepare`, :func:`define`, :func:`grid`). Recorded and
unrecorded compiles of a C++-wrapped graph never share an FX-graph cache
entry: the hooks add a marker to its key while installed (C++ sources
differ anyway, so the C++ caches never mix them). Graphs with a Python
wrapper keep their keys.

What stays unwrapped: the wrapper's allocations, device copies,
``aoti_torch_zero_`` of a buffer, and the runtime-dispatcher fallbacks
(``aoti_torch_call_dispatcher``, the proxy executor), which reach torch's
dispatcher and are recorded by the aten mode where it runs. So the
launches of a C++-wrapped graph take their hashes before afresh, never
from the data flow (see the graph_inputs hook)."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import Any

from .. import _hook_symbol, _native, _tensors
from . import cpp, triton

# What generated code calls, as the header declares it.
SYMBOL = "tritontui_launch"
# Bumped when the generated calls change: part of the FX-graph cache key.
HOOKS_VERSION = 1
_DECLARATION = f"""
// tritontui: a launch hook, bound only when the recorder is loaded
#include <cstring>
extern "C" __attribute__((weak)) void {SYMBOL}(const char*, int, void**);
static inline void* tritontui_int(int64_t v) {{
    return reinterpret_cast<void*>(static_cast<intptr_t>(v));
}}
static inline void* tritontui_float(double v) {{
    void* p;
    std::memcpy(&p, &v, sizeof p);
    return p;
}}
"""
_SEPARATOR = "\x1f"
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")

# (owner, attribute) -> the original, while the codegen is patched.
_ORIGINALS: dict[tuple[Any, str], Any] = {}


@dataclass(frozen=True)
class Value:
    """One value a call site passes to the hook."""

    code: str
    # The C++ expression passed (a tensor handle, an integer, a float).
    expr: str
    name: str


# -- the codegen ---------------------------------------------------------


def _site(kind: str, name: str, values: list[Value]) -> str:
    """The site string, as a C++ literal."""
    text = _SEPARATOR.join(
        (kind, name, "".join(v.code for v in values), ",".join(v.name for v in values))
    )
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace(_SEPARATOR, "\\037") + '"'


def _hook_line(kind: str, name: str, values: list[Value], phase: int) -> str:
    """One call of the hook, for ``phase`` (0 before, 1 after)."""
    passed = []
    for v in values:
        if v.code == "r":
            passed.append(f"(void*)({v.expr})" if phase else "nullptr")
        elif v.code == "n":
            passed.append(f"tritontui_int({v.expr})")
        elif v.code == "f":
            passed.append(f"tritontui_float({v.expr})")
        else:
            passed.append(f"(void*)(AtenTensorHandle)({v.expr})")
    site = _site(kind, name, values)
    if not passed:
        return f"if ({SYMBOL}) {SYMBOL}({site}, {phase}, nullptr);"
    return (
        f"if ({SYMBOL}) {{ void* tritontui_v[] = {{{', '.join(passed)}}}; "
        f"{SYMBOL}({site}, {phase}, tritontui_v); }}"
    )


@contextlib.contextmanager
def _around(wrapper: Any, kind: str, name: str, values: list[Value]):  # type: ignore[no-untyped-def]
    """The hook's two calls around the call site the body writes."""
    wrapper.writeline(_hook_line(kind, name, values, 0))
    yield
    wrapper.writeline(_hook_line(kind, name, values, 1))


def _scalar_code(arg_type: Any) -> str | None:
    """``n`` for an integer argument, ``f`` for a float, None for anything
    else; Inductor gives C++ type names for C++ kernels and Python or
    sympy types (``int``, ``sympy.Integer``, a symbolic size) for Triton's."""
    if isinstance(arg_type, type):
        import sympy

        if issubclass(arg_type, (bool, int)):
            return "n"
        if issubclass(arg_type, (float, sympy.Float)):
            return "f"
        if issubclass(arg_type, sympy.Expr) or arg_type.__name__ == "SymbolicCallArg":
            return "n"
        return None
    text = str(arg_type)
    if text in ("float", "double") or text.endswith(("float", "double")):
        return "f"
    if "int" in text or text in ("bool", "long", "size_t"):
        return "n"
    return None


def _kernel_body(wrapper: Any, name: str) -> str:
    """The source Inductor defined kernel ``name`` with, if it is known."""
    body = getattr(wrapper, "_kernel_name_to_body", {}).get(name)
    if body:
        return body
    from torch._inductor.codegen.wrapper import KernelDefinitionLine

    for line in reversed(getattr(wrapper, "lines", [])):
        if isinstance(line, KernelDefinitionLine) and line.kernel_name == name:
            return line.kernel_body or ""
    return ""


def _cpp_kernel_values(
    name: str, body: str, call_args: list[Any], arg_types: list[Any]
) -> list[Value]:
    """A C++ kernel's values: its pointers with the access its signature
    and body give them (as for the Python wrapper's kernels), its
    integer and float scalars."""
    params = cpp.parse_signature(body, name)
    values = []
    for i, (arg, arg_type) in enumerate(zip(call_args, arg_types, strict=True)):
        pname, _, access = params[i] if i < len(params) else (f"arg{i}", "", "in")
        if "*" in str(arg_type):
            values.append(Value(_tensors.ACCESS_CODES[access], str(arg), pname))
        elif (scalar := _scalar_code(arg_type)) is not None:
            values.append(Value(scalar, str(arg), pname))
    return values


def _triton_values(
    call_args: list[Any], arg_types: list[Any], body: str, triton_meta: Any, inductor_meta: Any
) -> list[Value]:
    """A Triton kernel's values: its tensors with the access Inductor's
    mutated arguments and the source give them (as for the Python
    wrapper's launches), its integer and float scalars. ``call_args`` are
    the C++ expressions the wrapper passes."""
    import torch

    names = triton.argument_names(triton_meta, inductor_meta)
    mutated = set((inductor_meta or {}).get("mutated_arg_names", ()))
    values = []
    for i, (arg, arg_type) in enumerate(zip(call_args, arg_types, strict=True)):
        name = names[i] if i < len(names) else f"arg{i}"
        if isinstance(arg_type, torch.dtype):
            access = triton.argument_access(name, mutated, body or None)
            values.append(Value(_tensors.ACCESS_CODES[access], arg, name))
        elif (scalar := _scalar_code(arg_type)) is not None:
            values.append(Value(scalar, arg, name))
    return values


def _tensor_names(graph: Any) -> set[str]:
    """The names the graph being generated gives its tensors: inputs,
    constants and buffers."""
    names = set(graph.graph_inputs) | set(graph.constants) | set(graph.name_to_buffer)
    names |= {getattr(b, "get_name", lambda: "")() for b in getattr(graph, "buffers", [])}
    return names


# What the extern call being generated writes: set by the helpers that
# call generate_c_shim_extern_kernel_call.
_EXTERN = threading.local()


def _extern_values(wrapper: Any, args: list[str], views: dict[str, str]) -> list[Value]:
    """Tensor arguments of a C-shim call, by what each is: a graph input,
    a constant or a buffer (read, or written when the call writes it), a
    handle the call returns, or a view (``views``: the name it was given,
    to the name of the tensor it views)."""
    from torch._inductor.virtualized import V

    known = _tensor_names(V.graph)
    out_first = getattr(_EXTERN, "out_first", False)
    mutated = getattr(_EXTERN, "mutated", set())
    values = []
    for i, arg in enumerate(args):
        arg = str(arg).strip()
        if arg.startswith("&") and arg.endswith("_handle") and arg[1:-7] in known:
            values.append(Value("r", arg[1:], arg[1:-7]))
            continue
        if not _IDENTIFIER.match(arg):
            continue
        base = views.get(arg) or arg.removesuffix("_as_strided")
        if arg not in views and base not in known and not _declared_handle(wrapper, arg):
            continue
        if i == 0 and out_first:
            code = "o"
        elif base in mutated:
            code = "x"
        else:
            code = "i"
        values.append(Value(code, arg, base))
    return values


def _declared_handle(wrapper: Any, name: str) -> bool:
    """Whether the wrapper declared ``name`` as a tensor handle (a view)."""
    pattern = re.compile(
        rf"(?:auto|RAIIAtenTensorHandle|AtenTensorHandle)\s+{re.escape(name)}\s*(?:=\s*wrap_with_raii|\()"
    )
    # Written to the wrapper's lines while the scheduler generates code,
    # to its call body while those lines are generated.
    lines = list(getattr(wrapper, "lines", [])[-200:])
    lines += list(getattr(getattr(wrapper, "wrapper_call", None), "_lines", [])[-200:])
    return any(pattern.search(str(line)) for line in lines)


_VIEWED = re.compile(r"reinterpret_tensor_wrapper\(\s*([A-Za-z_]\w*)")


def _hoisted(wrapper: Any, args: list[Any], views: dict[str, str]) -> list[str]:
    """``args`` with each view the wrapper builds inline
    (``wrap_with_raii_handle_if_needed(reinterpret_tensor_wrapper(buf, ...))``)
    bound to a name first, so that the hook can be passed it; ``views``
    gets each new name and the name of the tensor it views. Call inside
    a scope of the call's own (see :func:`_scope`)."""
    named = []
    for arg in map(str, args):
        viewed = _VIEWED.search(arg)
        if _IDENTIFIER.match(arg) or viewed is None:
            named.append(arg)
            continue
        count = getattr(wrapper, "_tritontui_views", 0)
        wrapper._tritontui_views = count + 1
        name = f"tritontui_view_{count}"
        wrapper.writeline(f"auto {name} = {arg};")
        views[name] = viewed.group(1)
        named.append(name)
    return named


@contextlib.contextmanager
def _scope(wrapper: Any):  # type: ignore[no-untyped-def]
    """A C++ block around a call, so that the views named for it live no
    longer than the inline ones they replace."""
    wrapper.writeline("{")
    yield
    wrapper.writeline("}")


def _patch(owner: Any, attribute: str, make: Any) -> None:
    original = owner.__dict__[attribute]
    _ORIGINALS[(owner, attribute)] = original
    setattr(owner, attribute, make(original))


def _patch_codegen() -> None:
    from torch._inductor.codegen.cpp_wrapper_cpu import CppWrapperCpu
    from torch._inductor.codegen.cpp_wrapper_gpu import CppWrapperGpu, DeferredTritonCallWrapper
    from torch._inductor.codegen.wrapper import PythonWrapperCodegen
    from torch._inductor.virtualized import V

    def write_header(original: Any) -> Any:
        def patched(self: Any) -> None:
            original(self)
            if not V.graph.is_const_graph:
                self.header.splice(_DECLARATION)

        return patched

    def cpp_call(original: Any) -> Any:
        def patched(self: Any, kernel_name: str, call_args: Any, **kwargs: Any) -> Any:
            body = _kernel_body(self, kernel_name)
            values = _cpp_kernel_values(
                kernel_name, body, list(call_args), list(kwargs["arg_types"])
            )
            with _around(self, "cpp", kernel_name, values):
                return original(self, kernel_name, call_args, **kwargs)

        return patched

    def triton_call(original: Any) -> Any:
        def patched(self: Any, kernel_name: str, call_args: Any, **kwargs: Any) -> Any:
            device = kwargs.get("device") or V.graph.get_current_device_or_throw()
            if device.type == "cpu" or not kwargs.get("triton", True):
                return original(self, kernel_name, call_args, **kwargs)
            body = _kernel_body(self, kernel_name)
            _source_comment(self, kernel_name, body)
            metas = self.__dict__.setdefault("_tritontui_meta", {})
            metas[kernel_name] = kwargs.get("inductor_meta") or {}
            # The expressions the wrapper passes (as the original makes them).
            args, arg_types = self.prepare_triton_wrapper_args(
                list(call_args), list(kwargs["arg_types"])
            )
            values = _triton_values(
                args, arg_types, body, kwargs.get("triton_meta"), kwargs.get("inductor_meta")
            )
            with _around(self, "triton", kernel_name, values):
                return original(self, kernel_name, call_args, **kwargs)

        return patched

    def extern_call(original: Any) -> Any:
        def patched(self: Any, kernel: str, args: list[str], device: str, **kwargs: Any) -> Any:
            name = kernel
            if not kernel.startswith("aoti_torch_"):
                name = self.get_c_shim_func_name(kernel, device)
            views: dict[str, str] = {}
            with _scope(self):
                if kwargs.get("debug_args") is None:
                    args = _hoisted(self, args, views)
                values = _extern_values(self, list(kwargs.get("debug_args") or args), views)
                with _around(self, "extern", name, values):
                    return original(self, kernel, args, device, **kwargs)

        return patched

    def out_helper(original: Any) -> Any:
        def patched(self: Any, *args: Any, **kwargs: Any) -> Any:
            _EXTERN.out_first = True
            try:
                return original(self, *args, **kwargs)
            finally:
                _EXTERN.out_first = False

        return patched

    def fallback(original: Any) -> Any:
        def patched(self: Any, node: Any, args: Any) -> Any:
            _EXTERN.mutated = set(node.get_mutation_names())
            try:
                return original(self, node, args)
            finally:
                _EXTERN.mutated = set()

        return patched

    def scatter(original: Any) -> Any:
        def patched(
            self: Any,
            output: str,
            inputs: list[Any],
            cpp_kernel_name: str,
            python_kernel_name: str,
            src_is_tensor: bool,
            reduce: Any,
            kwargs: Any,
            device: str,
        ) -> Any:
            views: dict[str, str] = {}
            known = _tensor_names(V.graph)
            # The shim the original calls (see _generate_scatter_fallback).
            name = self.get_c_shim_func_name(cpp_kernel_name, device).replace("__", "_") + "_out"
            with _scope(self):
                inputs = _hoisted(self, inputs, views)
                values = [Value("x", output, output)]
                for x in inputs[1:]:
                    if x in views or (_IDENTIFIER.match(x) and x in known):
                        values.append(Value("i", x, views.get(x, x)))
                with _around(self, "extern", name, values):
                    return original(
                        self,
                        output,
                        inputs,
                        cpp_kernel_name,
                        python_kernel_name,
                        src_is_tensor,
                        reduce,
                        kwargs,
                        device,
                    )

        return patched

    def index_put(original: Any) -> Any:
        def patched(
            self: Any, kernel: str, x: str, indices: list[Any], values_arg: str, accumulate: Any
        ) -> Any:
            views: dict[str, str] = {}
            with _scope(self):
                *indices, values_arg = _hoisted(self, [*indices, values_arg], views)
                values = [Value("x", x, "self")]
                values += [
                    Value("i", i, f"indices{n}")
                    for n, i in enumerate(indices)
                    if _IDENTIFIER.match(i)
                ]
                if _IDENTIFIER.match(values_arg):
                    values.append(Value("i", values_arg, "values"))
                with _around(self, "extern", kernel, values):
                    return original(self, kernel, x, indices, values_arg, accumulate)

        return patched

    def autotune_block(original: Any) -> Any:
        def patched(self: Any) -> Any:
            _native.enter_autotuning()
            try:
                return original(self)
            finally:
                _native.leave_autotuning()

        return patched

    def call_wrapper(original: Any) -> Any:
        def patched(self: Any, wrapper: Any) -> Any:
            result = original(self, wrapper)
            _config_comment(wrapper, self.kernel_name)
            return result

        return patched

    _patch(PythonWrapperCodegen, "generate_and_run_autotune_block", autotune_block)
    _patch(DeferredTritonCallWrapper, "generate", call_wrapper)
    _patch(CppWrapperCpu, "write_header", write_header)
    _patch(CppWrapperCpu, "_generate_kernel_call_helper", cpp_call)
    _patch(CppWrapperGpu, "_generate_kernel_call_helper", triton_call)
    _patch(CppWrapperCpu, "generate_c_shim_extern_kernel_call", extern_call)
    _patch(CppWrapperCpu, "_generate_extern_kernel_out_helper", out_helper)
    _patch(CppWrapperCpu, "generate_c_shim_fallback_kernel", fallback)
    _patch(CppWrapperCpu, "_generate_scatter_fallback", scatter)
    _patch(CppWrapperCpu, "_generate_index_put_fallback", index_put)


def _source_comment(wrapper: Any, name: str, body: str) -> None:
    """Writes a Triton kernel's source into the C++ file once, in a
    comment the recorder reads its source back from. Inductor's body is
    ``async_compile.triton('name', '''source''', ...)``: only the source
    is written (a JIT module embeds the C++ in a Python string that
    three quotes would end)."""
    written = wrapper.__dict__.setdefault("_tritontui_sources", set())
    if name in written or not body:
        return
    written.add(name)
    first, last = body.find("'''"), body.rfind("'''")
    if 0 <= first < last:
        body = body[first + 3 : last]
    body = body.replace("'''", "' ' '").replace("*/", "* /")
    wrapper.header.splice(f"/* tritontui source of {name}:\n{body}\n*/")


def _config_comment(wrapper: Any, name: str) -> None:
    """Writes the config a Triton kernel was compiled with (its block
    sizes, warps and stages, as autotuning chose them) and Inductor's
    facts about it into the C++ file, in a comment the recorder reads back
    at its launches."""
    from torch._inductor.codecache import CudaKernelParamCache

    params = CudaKernelParamCache.get(name) or {}
    # The meta the call site was generated with (the cache's lacks some).
    inductor_meta = wrapper.__dict__.get("_tritontui_meta", {}).get(name)
    inductor_meta = inductor_meta or params.get("inductor_meta") or {}
    details = {
        "config": {k: triton.meta_scalar(v) for k, v in (params.get("config") or {}).items()},
        "meta": triton.kernel_meta(inductor_meta, inductor_meta.get("mutated_arg_names", ())),
        "grid": _grid_expressions(params),
    }
    wrapper.prefix.writeline(f"/* tritontui config of {name}: {json.dumps(details)} */")


def _grid_expressions(params: dict[str, Any]) -> dict[str, Any] | None:
    """The grid the launcher computes, as Inductor writes it for the
    Python wrapper (``GridExpr`` in Python: statements, then one
    expression per axis, over the kernel's integer arguments); None if
    Inductor cannot say."""
    from torch._inductor.runtime.triton_heuristics import GridExpr

    try:
        grid = GridExpr.from_meta(params["inductor_meta"], params["config"], mode="python")
    except Exception:
        return None
    return {
        "prefix": list(grid.prefix),
        "axes": [str(grid.x_grid), str(grid.y_grid), str(grid.z_grid)],
    }


def _patch_cache_key() -> None:
    """Adds the hooks' version to the FX-graph cache key of every graph
    compiled with a C++ wrapper while they are in, so that a hooked graph
    is never served to an unrecorded compile nor the other way round.

    A graph with a Python wrapper keeps its key: its code is the same
    recorded or not, and a compile that missed the cache would compile and
    autotune its kernels again (during a CUDA graph capture, autotuning
    synchronizes and the capture fails)."""
    import torch._inductor.config as config
    from torch._inductor.codecache import FxGraphHashDetails

    def init(original: Any) -> Any:
        def patched(self: Any, *args: Any, **kwargs: Any) -> None:
            original(self, *args, **kwargs)
            if config.cpp_wrapper:
                self.tritontui_cpp_wrapper_hooks = HOOKS_VERSION

        return patched

    _patch(FxGraphHashDetails, "__init__", init)


# -- the runtime ---------------------------------------------------------


@dataclass(frozen=True)
class Site:
    """A parsed site string, with where its code was loaded from, and
    what each launch of it needs, worked out once."""

    address: int
    kind: str
    name: str
    codes: str
    names: list[str]
    module: str
    # The values there before the call, in order, then those it returns:
    # the order of the kernel's arguments in the trace.
    given: list[int]
    returned: list[int]
    # The describer's access codes of the given values (scalars are read).
    access: bytes
    # The integer values (what a Triton kernel's grid is computed from).
    integers: list[int]

    @classmethod
    def at(cls, address: int) -> Site:
        kind, name, codes, names = ctypes.string_at(address).decode().split(_SEPARATOR)
        given = [i for i, c in enumerate(codes) if c != "r"]
        returned = [i for i, c in enumerate(codes) if c == "r"]
        access = "".join("i" if codes[i] in "nf" else codes[i] for i in given).encode()
        return cls(
            address,
            kind,
            name,
            codes,
            names.split(",") if names else [],
            _module_of(address),
            given,
            returned,
            access,
            [i for i, c in enumerate(codes) if c == "n"],
        )


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


def _module_of(address: int) -> str:
    """The shared object holding ``address``."""
    info = _DlInfo()
    libc = ctypes.CDLL(None)
    if libc.dladdr(ctypes.c_void_p(address), ctypes.byref(info)) and info.dli_fname:
        return os.fsdecode(info.dli_fname)
    return ""


_SITES: dict[int, Site] = {}


def _site_at(address: int) -> Site:
    """The site whose string is at ``address``, parsed once."""
    site = _SITES.get(address)
    if site is None:
        site = _SITES[address] = Site.at(address)
    return site


def prepare(
    session: Any, address: int
) -> tuple[str, bytes, list[int], list[int], bytes, list[int], bool]:
    """What the native hook fixes for the site at ``address``: the
    kernel's name, the value codes, the given and returned values'
    positions, the given values' access codes, the integers' positions,
    and whether ``session`` records the kernel."""
    site = _site_at(address)
    return (
        site.name,
        site.codes.encode(),
        site.given,
        site.returned,
        site.access,
        site.integers,
        session.wants(site.name),
    )


def define(session: Any, address: int) -> int:
    """The trace's kernel id of the site's kernel, defining it the first
    time."""
    site = _site_at(address)
    return session.kernel_id(
        (site.kind, site.name, site.module), lambda: _definition(session, site)
    )


def drop_unfinished() -> None:
    """Forgets the launches of this thread that began and never ended (the
    generated code raised between the hook's two calls): the thread is no
    longer inside a launch, and each leaves a gap in its trace."""
    _native.cpp_wrapper_drop_unfinished()


def _definition(session: Any, site: Site) -> dict[str, Any]:
    access = {"i": "in", "o": "out", "x": "inout", "r": "out", "n": "in", "f": "in"}
    path, text, details = _kernel_source(site)
    lang = {"triton": "python"}.get(site.kind, "cpp")
    return {
        "name": site.name,
        "backend": site.kind,
        "args": [
            {"name": site.names[i], "type": "", "access": access[site.codes[i]]}
            for i in site.given + site.returned
        ],
        "source": session.source_id(path, lang, text) if text else None,
        "meta": {**details.get("meta", {}), "wrapper": "cpp"},
        "config": details.get("config", {}),
    }


class _Grid:
    """How a Triton kernel's launches compute their grid from its integer
    arguments (see :func:`_grid_expressions`), compiled once (the native
    hook keeps each grid by those arguments' values)."""

    def __init__(self, expressions: dict[str, Any]) -> None:
        axes = ", ".join(f"({axis})" for axis in expressions["axes"])
        text = "\n".join([*expressions["prefix"], f"grid = [{axes}]"])
        self.code = compile(text, "<tritontui grid>", "exec")

    def of(self, site: Site, sizes: list[int]) -> list[int]:
        """The grid of a launch whose integer arguments are ``sizes``."""
        scope: dict[str, Any] = {"__builtins__": {"max": max, "min": min}}
        scope.update(zip((site.names[i] for i in site.integers), sizes, strict=True))
        exec(self.code, scope)
        return [int(g) for g in scope["grid"]]


# Grids by site address; None where the kernel's file says none.
_GRIDS: dict[int, _Grid | None] = {}


def grid(address: int, sizes: list[int]) -> list[int]:
    """The grid of a launch of the site at ``address`` whose integer
    arguments are ``sizes``: a Triton kernel's; [] for other kernels, or
    where it cannot be known."""
    site = _site_at(address)
    if site.kind != "triton":
        return []
    try:
        if site.address not in _GRIDS:
            expressions = _kernel_source(site)[2].get("grid")
            _GRIDS[site.address] = _Grid(expressions) if expressions else None
        grid = _GRIDS[site.address]
        return grid.of(site, sizes) if grid is not None else []
    except Exception:
        # Expressions that do not compile, or over a name the call does
        # not pass: the grid is not known.
        _GRIDS[site.address] = None
        return []


# Kernel sources by (module, kernel name), read once.
_SOURCES: dict[tuple[str, str], tuple[str, str, dict[str, Any]]] = {}


def _kernel_source(site: Site) -> tuple[str, str, dict[str, Any]]:
    """(file, text, config, meta and grid) of the kernel's definition, from
    the C++ beside the module that called the hook; ("", "", {}) for an
    extern kernel or when the file is gone."""
    key = (site.module, site.name)
    if key not in _SOURCES:
        _SOURCES[key] = _read_kernel_source(site)
    return _SOURCES[key]


def _read_kernel_source(site: Site) -> tuple[str, str, dict[str, Any]]:
    if site.kind == "extern" or not site.module:
        return "", "", {}
    stem = site.module.removesuffix(".so")
    candidates = [stem + ".cpp"]
    if stem.endswith(".wrapper"):
        # An AOTInductor package keeps its C++ kernels in a file of its own.
        folder = os.path.dirname(stem)
        with contextlib.suppress(OSError):
            kernels = sorted(f for f in os.listdir(folder) if f.endswith(".kernel.cpp"))
            candidates += [os.path.join(folder, f) for f in kernels]
    for path in candidates:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        if site.kind == "triton":
            found = _triton_comment(text, site.name)
        else:
            found = _cpp_function(text, site.name)
        if found:
            return path, found, _config_of(text, site.name)
    return "", "", {}


def _config_of(text: str, name: str) -> dict[str, Any]:
    """What :func:`_config_comment` wrote for kernel ``name``, if anything."""
    marker = f"/* tritontui config of {name}: "
    start = text.find(marker)
    if start < 0:
        return {}
    start += len(marker)
    end = text.find(" */", start)
    try:
        return json.loads(text[start:end])
    except ValueError:
        return {}


def _triton_comment(text: str, name: str) -> str:
    marker = f"/* tritontui source of {name}:\n"
    start = text.find(marker)
    if start < 0:
        return ""
    start += len(marker)
    end = text.find("\n*/", start)
    return text[start:end] if end >= 0 else ""


def _cpp_function(text: str, name: str) -> str:
    """The definition of ``extern "C" void name(...) { ... }`` in ``text``."""
    for match in re.finditer(r'extern\s+"C"[^;{(]*\b' + re.escape(name) + r"\s*\(", text):
        open_brace = text.find("{", match.end())
        semicolon = text.find(";", match.end())
        if open_brace < 0 or (0 <= semicolon < open_brace):
            continue  # a declaration
        depth = 0
        for i in range(open_brace, len(text)):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    return text[match.start() : i + 1]
    return ""


# -- installation --------------------------------------------------------


def _new_handle_address() -> int:
    import torch

    lib = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
    return ctypes.cast(lib.aoti_torch_new_tensor_handle, ctypes.c_void_p).value or 0


def install(session: Any) -> None:
    """Patches the C++ wrapper codegen and binds a native hook recording
    into ``session``. Where
    that cannot be done (a torch without these internals), warns and
    leaves C++ wrappers stock: their graphs are then said unrecorded."""
    import torch

    try:
        _hook_symbol.make_global()
        hook = _native.CppWrapperHook(
            session,
            sys.modules[__name__],
            torch._C._aoti.alloc_tensors_by_stealing_from_void_ptrs,
            _new_handle_address(),
            getattr(torch._C, "_cuda_getCurrentRawStream", None),
        )
        _native.cpp_wrapper_bind(hook)
        patch_codegen()
    except Exception as e:
        uninstall()
        warnings.warn(
            f"tritontui: graphs compiled with a C++ wrapper (cpp_wrapper, AOTInductor) will not "
            f"be recorded: the recorder's hooks could not be installed ({e!r})",
            RuntimeWarning,
            stacklevel=3,
        )


def uninstall() -> None:
    """Puts the codegen back and unbinds the native hook (modules compiled
    with the hooks keep calling it; it returns at once)."""
    _native.cpp_wrapper_unbind()
    unpatch_codegen()


def patch_codegen() -> None:
    """Makes C++ wrappers generated from now on call the hooks."""
    if not _ORIGINALS:
        _patch_codegen()
        _patch_cache_key()


def unpatch_codegen() -> None:
    """Puts Inductor's C++ wrapper codegen back as it was."""
    for (owner, attribute), original in list(_ORIGINALS.items()):
        setattr(owner, attribute, original)
        del _ORIGINALS[(owner, attribute)]


@contextlib.contextmanager
def codegen_hooks():  # type: ignore[no-untyped-def]
    """C++ wrappers generated inside call the hooks (left as they are if
    a recording has them in already)."""
    if _ORIGINALS:
        yield
        return
    patch_codegen()
    try:
        yield
    finally:
        unpatch_codegen()


def hook_sites(source: str) -> int:
    """How many calls of the hook generated wrapper code makes (0: the
    graph was compiled without the hooks)."""
    return source.count(SYMBOL + "(") - source.count(f"void {SYMBOL}(")


def calls() -> int:
    """How many times generated code called the native hook so far."""
    return _native.cpp_wrapper_calls()


def call_ended(calls_before: int) -> bool:
    """Ends a call of a C++-wrapped graph or model (see
    :func:`drop_unfinished`); whether it reached the hook since
    ``calls()`` was ``calls_before``."""
    drop_unfinished()
    return calls() != calls_before

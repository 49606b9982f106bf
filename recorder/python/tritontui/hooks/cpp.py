"""Inductor's C++ kernels on CPU, and the buffers its wrappers allocate.

The generated wrapper module calls each ``cpp_fused_*`` kernel through a
module global (a builtin compiled by ``async_compile.cpp_pybinding``).
When such a module is loaded (``PyCodeCache.load_by_key_path``, on a fresh
compile or a cache hit) or was loaded before recording started, each of
those globals is replaced by a native proxy (``_native.CppKernelHook``,
no Python frame per launch) that records the call; :class:`CppKernel`
tells it what it asks once per session. Argument names and constness
come from the C++ signature."""

from __future__ import annotations

import re
import types
from typing import Any

from .. import _access as _outputs
from .. import _active, _native, _tensors
from . import wrapper_allocations

_ORIGINAL_LOAD: Any = None
# (module, global name, original builtin) for every proxy installed.
_PATCHED: list[tuple[types.ModuleType, str, Any]] = []


class CppKernel:
    """What the native proxy of one C++ kernel (``_native.CppKernelHook``)
    asks once per session: whether the session records it, the access
    codes of a call with so many arguments, its definition in the trace."""

    def __init__(self, name: str, kernel: Any, module_path: str) -> None:
        self.name = name
        self.cpp_path = _cpp_path(kernel)
        self.module_path = module_path
        self._source: str | None = None
        self._params: list[tuple[str, str, str]] | None = None

    def source(self) -> str:
        """The kernel's C++ source, read once."""
        if self._source is None:
            self._source = _read(self.cpp_path)
        return self._source

    def params(self) -> list[tuple[str, str, str]]:
        """(name, C++ type, access) per parameter, from the source."""
        if self._params is None:
            self._params = parse_signature(self.source())
        return self._params

    def wanted(self, session: Any) -> bool:
        """Whether ``session`` records this kernel."""
        return session.wants(self.name)

    def codes(self, count: int) -> bytes:
        """The access codes of a call with ``count`` arguments."""
        params = self.params()
        access = [a for _, _, a in params] + ["in"] * (count - len(params))
        return _tensors.access_codes(access)

    def define(self, session: Any) -> int:
        """The kernel's id in ``session``'s trace, defined the first time."""

        def definition() -> dict[str, Any]:
            text = self.source()
            return {
                "name": self.name,
                "backend": "cpp",
                "args": [{"name": n, "type": t, "access": a} for n, t, a in self.params()],
                "source": session.source_id(self.cpp_path, "cpp", text) if text else None,
                # No compiler flag says whether it uses atomics: tritontui
                # reads that from the source.
                "meta": {},
                "config": {},
            }

        return session.kernel_id(("cpp", self.name, self.cpp_path), definition)


def parse_signature(source: str, name: str = "kernel") -> list[tuple[str, str, str]]:
    """Parameters of ``extern "C" void name(...)``: non-const pointers are
    written, and read too when the body reads them before writing them
    (see the _access module); everything else is read."""
    match = re.search(
        r'extern\s+"C"\s+[^\n(]*?\b' + re.escape(name) + r"\s*\(([^)]*)\)", source, re.S
    )
    if not match:
        return []
    body = source[match.end() :]
    params = []
    for raw in match.group(1).split(","):
        raw = " ".join(raw.split())
        if not raw:
            continue
        name = re.split(r"[\s*&]+", raw)[-1]
        ctype = raw[: len(raw) - len(name)].strip()
        pointer = "*" in ctype
        const = ctype.startswith("const ") or " const" in ctype
        access = _outputs.cpp_output_access(body, name) if pointer and not const else "in"
        params.append((name, ctype, access))
    return params


def _read(path: str | None) -> str:
    if not path:
        return ""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _cpp_path(kernel: Any) -> str | None:
    so = getattr(getattr(kernel, "__self__", None), "__file__", None)
    if not so:
        return None
    return so.rsplit(".", 1)[0] + ".cpp"


def _is_cpp_kernel(value: Any) -> bool:
    owner = getattr(value, "__self__", None)
    return (
        isinstance(value, types.BuiltinFunctionType)
        and value.__name__ == "kernel"
        and isinstance(owner, types.ModuleType)
        and owner.__name__.endswith(".kernel")
    )


def wrap_module(module: types.ModuleType) -> None:
    """Replaces the module's C++ kernel globals and the wrapper's own
    buffer allocators with recording proxies."""
    for name, value in list(vars(module).items()):
        if _is_cpp_kernel(value):
            info = CppKernel(name, value, getattr(module, "__file__", ""))
            proxy: Any = _native.CppKernelHook(value, info)
        elif (
            name in wrapper_allocations.NAMES
            and callable(value)
            and not wrapper_allocations.is_proxy(value)
        ):
            proxy = wrapper_allocations.proxy(name, value)
        else:
            continue
        setattr(module, name, proxy)
        _PATCHED.append((module, name, value))


def install() -> None:
    global _ORIGINAL_LOAD
    if _ORIGINAL_LOAD is not None:
        return
    from torch._inductor.codecache import PyCodeCache

    _ORIGINAL_LOAD = PyCodeCache.__dict__["load_by_key_path"]
    original = _ORIGINAL_LOAD.__func__

    def load_by_key_path(cls: Any, *args: Any, **kwargs: Any) -> types.ModuleType:
        module = original(cls, *args, **kwargs)
        try:
            wrap_module(module)
        except Exception as e:
            session = _active.active()
            if session is not None:
                session.fail(e)
        return module

    PyCodeCache.load_by_key_path = classmethod(load_by_key_path)
    for module in list(PyCodeCache.modules) + list(PyCodeCache.modules_no_attr.values()):
        wrap_module(module)


def uninstall() -> None:
    global _ORIGINAL_LOAD
    if _ORIGINAL_LOAD is None:
        return
    from torch._inductor.codecache import PyCodeCache

    PyCodeCache.load_by_key_path = _ORIGINAL_LOAD
    _ORIGINAL_LOAD = None
    while _PATCHED:
        module, name, original = _PATCHED.pop()
        current = getattr(module, name, None)
        if isinstance(current, _native.CppKernelHook) or wrapper_allocations.is_proxy(current):
            setattr(module, name, original)

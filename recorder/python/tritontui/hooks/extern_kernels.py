"""Inductor's extern kernels recorded without the dispatch mode: each
entry of ``torch._inductor.select_algorithm.extern_kernels`` that is a
torch function (``torch.mm``) or an op (``torch.ops.mkldnn._linear_pointwise``)
is replaced, while aten ops are recorded, by a native proxy
(``_native.ExternHook``) that records the op overload the call selects as
the aten mode would, with the mode off the stack for the call (see
``recorder/src/python/extern_hook.rs``). Entries that are Python functions
(``bias_addmm``) stay: the ops they call go through the mode.

The namespace is filled when Inductor's kernel modules are imported, which
a compilation (or a compiled graph loaded from the cache) does; a
recording that starts before that installs the proxies at the first call
of a compiled graph."""

from __future__ import annotations

import sys
import types
from typing import Any

import torch

from .. import _native

# (entry name, original) of each entry replaced.
_REPLACED: list[tuple[str, Any]] = []
# The aten mode whose hook the proxies record through, until installed.
_PENDING: Any = None
_NAMESPACE = "torch._inductor.select_algorithm"


def install(mode: Any) -> None:
    """Replaces the extern kernels by proxies recording through ``mode``
    (the aten recorder), now if Inductor's namespace of them is imported,
    else at the first graph call (:func:`install_pending`)."""
    global _PENDING
    _PENDING = mode
    install_pending()


def install_pending() -> None:
    """Installs the proxies of :func:`install` once Inductor has imported
    its extern kernels."""
    global _PENDING
    if _PENDING is None:
        return
    module = sys.modules.get(_NAMESPACE)
    if module is None:
        return
    mode, _PENDING = _PENDING, None
    namespace = module.extern_kernels
    for name, original in list(vars(namespace).items()):
        if _recordable(original):
            proxy = _native.ExternHook(original, mode.hook, mode, sys.modules[__name__])
            _REPLACED.append((name, original))
            setattr(namespace, name, proxy)


def uninstall() -> None:
    """Puts the original entries back."""
    global _PENDING
    _PENDING = None
    module = sys.modules.get(_NAMESPACE)
    while _REPLACED:
        name, original = _REPLACED.pop()
        if module is not None:
            setattr(module.extern_kernels, name, original)


def _recordable(entry: Any) -> bool:
    """Whether an entry is a torch function or op (a Python function's ops
    go through the mode themselves)."""
    return isinstance(
        entry, (types.BuiltinFunctionType, torch._ops.OpOverloadPacket, torch._ops.OpOverload)
    )


def overload(
    original: Any, positional: int, names: list[str]
) -> tuple[Any, list[tuple[str, bool, bool, Any]]] | None:
    """The op overload that a call of extern kernel ``original`` with
    ``positional`` positional arguments and keyword arguments ``names``
    selects (``torch.mm(a, b, out=c)``: ``aten.mm.out``), with its schema's
    arguments (name, whether keyword-only, whether it has a default, the
    default); None unless exactly one overload fits. Asked once per
    kernel and call shape."""
    if isinstance(original, torch._ops.OpOverload):
        candidates = [original]
    else:
        packet = original
        if not isinstance(packet, torch._ops.OpOverloadPacket):
            packet = getattr(torch.ops.aten, getattr(original, "__name__", ""), None)
        if packet is None:
            return None
        candidates = [getattr(packet, name) for name in packet.overloads()]
    fitting = [op for op in candidates if _fits(op._schema, positional, names)]
    if len(fitting) != 1:
        return None
    (op,) = fitting
    params = [
        (a.name, a.kwarg_only, a.has_default_value(), a.default_value) for a in op._schema.arguments
    ]
    return op, params


def _fits(schema: Any, positional: int, names: list[str]) -> bool:
    """Whether a call with ``positional`` positional arguments and keyword
    arguments ``names`` binds to ``schema``: every name one of its
    arguments and not given positionally too, every argument without a
    default given."""
    arguments = schema.arguments
    in_order = [a.name for a in arguments if not a.kwarg_only]
    if positional > len(in_order):
        return False
    given = set(in_order[:positional])
    known = {a.name for a in arguments}
    if any(name not in known or name in given for name in names):
        return False
    given |= set(names)
    return all(a.name in given or a.has_default_value() for a in arguments)

"""Inductor's Triton launches: ``CachingAutotuner.run`` is replaced, while
recording, by a native callable (``_native.TritonHook``) that describes the
arguments, runs the original ``run`` and writes the launch record without
a Python frame of its own. Benchmark launches made while autotuning happen
inside ``run`` through the launchers directly, so they are never seen here
and never recorded as program launches.

This module gives the hook what is fixed per autotuner (:func:`prepare`),
per kernel config (:func:`define`) and per config and sizes (:func:`grid`);
the hook asks once and caches the answers."""

from __future__ import annotations

import sys
from typing import Any

from .. import _access as _outputs
from .. import _native, _tensors

_ORIGINAL: Any = None


def install(session: Any) -> None:
    """Hooks Inductor's Triton launches into ``session``."""
    global _ORIGINAL
    if _ORIGINAL is not None:
        return
    try:
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    except ImportError:
        return  # torch without Triton: no Triton launches to record

    _ORIGINAL = CachingAutotuner.run
    CachingAutotuner.run = _native.TritonHook(_ORIGINAL, session, sys.modules[__name__])


def kernel_name(autotuner: Any) -> str:
    """The kernel's Inductor name (``triton_red_fused_sum_0``)."""
    return autotuner.inductor_meta.get("kernel_name") or autotuner.fn.__name__


def config_items(config: Any) -> dict[str, Any]:
    """A Triton config's launch settings: its block sizes, then its warps
    and stages (a kernel's ``config`` in the trace)."""
    return {**config.kwargs, "num_warps": config.num_warps, "num_stages": config.num_stages}


def argument_access(name: str, mutated: set[str], source: str | None) -> str:
    """How the kernel uses argument ``name``: outputs are those Inductor
    names or lists as mutated. One Inductor lists as mutated is a buffer
    the kernel updates in place, whose bytes it does not store keep their
    old value (a scatter into an input): read and written. Whether another
    output is also read is decided from the kernel's source when it is
    known (see the _access module)."""
    if name in mutated:
        return "inout"
    if not name.startswith(("in_out_ptr", "out_ptr")):
        return "in"
    if source is not None:
        return _outputs.triton_output_access(source, name)
    return "inout" if name.startswith("in_out_ptr") else "out"


def _source(autotuner: Any) -> str | None:
    """The Triton function's source (kept by Inductor even after pickling)."""
    source = getattr(getattr(autotuner, "fn", None), "src", None)
    return source if isinstance(source, str) else None


def meta_scalar(value: Any) -> Any:
    """A meta or config value as the trace keeps it (text unless a scalar)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def argument_names(triton_meta: Any, inductor_meta: Any) -> list[str]:
    """A launch's argument names, in order: the signature's, less its
    compile-time constants, then the launcher's extra arguments."""
    signature = (triton_meta or {}).get("signature", {})
    names = [n for n, t in signature.items() if t != "constexpr"]
    return names + list((inductor_meta or {}).get("extra_launcher_args", ()))


def _arguments(autotuner: Any) -> tuple[list[str], list[str]]:
    """The launch arguments' names and how the kernel uses each."""
    names = argument_names(autotuner.triton_meta, autotuner.inductor_meta)
    mutated = set(autotuner.mutated_arg_names)
    source = _source(autotuner)
    return names, [argument_access(n, mutated, source) for n in names]


def kernel_meta(inductor_meta: Any, mutated: Any) -> dict[str, Any]:
    """What a kernel's trace definition keeps of Inductor's facts about it
    (``meta``): whether it uses atomic adds, its determinism flags, its
    grid and reduction kind, the arguments it mutates."""
    keys = (
        "atomic_add_found",
        "deterministic",
        "are_deterministic_algorithms_enabled",
        "grid_type",
        "reduction_hint",
    )
    meta = {k: meta_scalar((inductor_meta or {}).get(k)) for k in keys}
    meta["mutated_arg_names"] = ",".join(sorted(mutated))
    return meta


def _definition(session: Any, autotuner: Any, config: Any) -> dict[str, Any]:
    meta = kernel_meta(autotuner.inductor_meta, autotuner.mutated_arg_names)
    meta["heuristic"] = str(autotuner.heuristic_type)
    user = getattr(autotuner.heuristic_type, "name", "") == "USER_AUTOTUNE"
    signature = autotuner.triton_meta["signature"]
    source = session.source_id(autotuner.filename, "python") if autotuner.filename else None
    names, access = _arguments(autotuner)
    return {
        "name": kernel_name(autotuner),
        "backend": "user-triton" if user else "triton",
        "args": [
            {"name": n, "type": str(signature.get(n, "")), "access": a}
            for n, a in zip(names, access, strict=True)
        ],
        "source": source,
        "meta": meta,
        "config": {k: meta_scalar(v) for k, v in config_items(config).items()},
    }


def uninstall() -> None:
    global _ORIGINAL
    if _ORIGINAL is None:
        return
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    CachingAutotuner.run = _ORIGINAL
    _ORIGINAL = None


def prepare(autotuner: Any, session: Any) -> tuple[str, bytes, bool]:
    """The kernel's name, its arguments' access codes, and whether the
    session records it."""
    name = kernel_name(autotuner)
    _, access = _arguments(autotuner)
    return name, _tensors.access_codes(access), session.wants(name)


def define(session: Any, autotuner: Any, config: Any) -> int:
    """The trace's kernel id for this autotuner and config, defining it the
    first time."""
    return session.kernel_id(
        ("triton", id(autotuner), id(config)), lambda: _definition(session, autotuner, config)
    )


def grid(autotuner: Any, config: Any, args: tuple[Any, ...]) -> list[int]:
    """The grid the launcher computes, from the same expression."""
    _, computed = autotuner._interpret_args_grid(args, config)
    return [int(g) for g in computed]

"""Inductor's Triton launches: a class-level patch of
``CachingAutotuner.run``. Benchmark launches made while autotuning happen
inside ``run`` through the launchers directly, so they are never seen here
and never recorded as program launches.

This runs on every launch, so everything fixed per kernel (argument names,
their access, the kernel record) or per kernel, config and scalar arguments
(the grid) is computed once and cached."""

from __future__ import annotations

from typing import Any

import torch

from . import _session, _tensors

_ORIGINAL: Any = None
# What never changes for an autotuner, kept on it under this attribute.
_STATIC = "_tritontui_static"


class _Static:
    """Per autotuner: argument names and access, and grids by config and
    scalar arguments."""

    __slots__ = ("access", "codes", "grids", "names", "scalars")

    def __init__(self, autotuner: Any) -> None:
        signature = autotuner.triton_meta["signature"]
        self.names = [n for n, t in signature.items() if t != "constexpr"]
        self.names += list(autotuner.inductor_meta.get("extra_launcher_args", ()))
        mutated = set(autotuner.mutated_arg_names)
        self.access = [_access(n, mutated) for n in self.names]
        self.codes = _tensors.access_codes(self.access)
        self.grids: dict[Any, list[int]] = {}
        # Positions of the non-tensor arguments, from the first launch.
        self.scalars: list[int] | None = None


def _static(autotuner: Any) -> _Static:
    found = autotuner.__dict__.get(_STATIC)
    if found is None:
        found = autotuner.__dict__[_STATIC] = _Static(autotuner)
    return found


def install() -> None:
    global _ORIGINAL
    if _ORIGINAL is not None:
        return
    try:
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    except ImportError:
        return  # torch without Triton: no Triton launches to record

    _ORIGINAL = CachingAutotuner.run

    def run(self: Any, *args: Any, stream: Any, **kwargs: Any) -> Any:
        session = _session.active()
        if session is None:
            return _ORIGINAL(self, *args, stream=stream, **kwargs)
        name = _kernel_name(self)
        if not session.wants(name):
            return _ORIGINAL(self, *args, stream=stream, **kwargs)
        try:
            static = _static(self)
            described = session.describe(args, static.codes, stream=stream)
            if session.breaks is not None:
                session.before_launch(name)
        except Exception as e:
            session.fail(e)
            return _ORIGINAL(self, *args, stream=stream, **kwargs)
        with _session.inside_launch():
            result = _ORIGINAL(self, *args, stream=stream, **kwargs)
        try:
            _record(session, self, name, static, args, described, stream)
        except Exception as e:
            session.fail(e)
        return result

    CachingAutotuner.run = run


def uninstall() -> None:
    global _ORIGINAL
    if _ORIGINAL is None:
        return
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    CachingAutotuner.run = _ORIGINAL
    _ORIGINAL = None


def _kernel_name(autotuner: Any) -> str:
    return autotuner.inductor_meta.get("kernel_name") or autotuner.fn.__name__


def _config(autotuner: Any) -> Any:
    if autotuner.launchers:
        return autotuner.launchers[0].config
    return autotuner.configs[0]


def _access(name: str, mutated: set[str]) -> str:
    if name.startswith("in_out_ptr") or name in mutated:
        return "inout"
    if name.startswith("out_ptr"):
        return "out"
    return "in"


def _meta_scalar(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _grid(autotuner: Any, static: _Static, config: Any, args: tuple[Any, ...]) -> list[int]:
    """The grid the launcher computed, from the same expression; cached by
    config and scalar arguments (sizes), which are all it depends on."""
    if static.scalars is None:
        static.scalars = [i for i, a in enumerate(args) if not isinstance(a, torch.Tensor)]
    key = (id(config), *[args[i] for i in static.scalars])
    grid = static.grids.get(key)
    if grid is None:
        _, computed = autotuner._interpret_args_grid(args, config)
        grid = static.grids[key] = [int(g) for g in computed]
    return grid


def _define(
    session: Any, autotuner: Any, name: str, static: _Static, config: Any
) -> dict[str, Any]:
    meta_keys = (
        "atomic_add_found",
        "deterministic",
        "are_deterministic_algorithms_enabled",
        "grid_type",
        "reduction_hint",
    )
    meta = {k: _meta_scalar(autotuner.inductor_meta.get(k)) for k in meta_keys}
    meta["heuristic"] = str(autotuner.heuristic_type)
    meta["mutated_arg_names"] = ",".join(sorted(autotuner.mutated_arg_names))
    user = getattr(autotuner.heuristic_type, "name", "") == "USER_AUTOTUNE"
    signature = autotuner.triton_meta["signature"]
    items = {**config.kwargs, "num_warps": config.num_warps, "num_stages": config.num_stages}
    source = session.source_id(autotuner.filename, "python") if autotuner.filename else None
    return {
        "name": name,
        "backend": "user-triton" if user else "triton",
        "args": [
            {"name": n, "type": str(signature.get(n, "")), "access": a}
            for n, a in zip(static.names, static.access, strict=False)
        ],
        "source": source,
        "meta": meta,
        "config": {k: _meta_scalar(v) for k, v in items.items()},
    }


def _record(
    session: Any,
    autotuner: Any,
    name: str,
    static: _Static,
    args: tuple[Any, ...],
    described: Any,
    stream: Any,
) -> None:
    config = _config(autotuner)
    grid = _grid(autotuner, static, config, args)
    kernel = session.kernel_id(
        ("triton", id(autotuner), id(config)),
        lambda: _define(session, autotuner, name, static, config),
    )
    session.launch(kernel, grid, stream or 0, described)

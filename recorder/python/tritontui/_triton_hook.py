"""Inductor's Triton launches: a class-level patch of
``CachingAutotuner.run``. Benchmark launches made while autotuning happen
inside ``run`` through the launchers directly, so they are never seen here
and never recorded as program launches.

This runs on every launch, so everything fixed per kernel (argument names,
their access, the kernel record) or per kernel, config and scalar arguments
(the grid) is computed once and cached."""

from __future__ import annotations

import operator
import threading
from typing import Any

import torch

from . import _session, _tensors

_ORIGINAL: Any = None
# What never changes for an autotuner, kept on it under this attribute.
_STATIC = "_tritontui_static"


class _Static:
    """Per autotuner: name, argument names and access, grids by config and
    scalar arguments, and the kernel ids of the session recording it."""

    __slots__ = ("access", "codes", "grids", "kernels", "name", "names", "scalars", "session")

    def __init__(self, autotuner: Any) -> None:
        self.name = _kernel_name(autotuner)
        signature = autotuner.triton_meta["signature"]
        self.names = [n for n, t in signature.items() if t != "constexpr"]
        self.names += list(autotuner.inductor_meta.get("extra_launcher_args", ()))
        mutated = set(autotuner.mutated_arg_names)
        self.access = [_access(n, mutated) for n in self.names]
        self.codes = _tensors.access_codes(self.access)
        self.grids: dict[Any, list[int]] = {}
        # Reads the non-tensor arguments (sizes), set at the first launch.
        self.scalars: Any = None
        # Kernel ids by config, valid for `session` only.
        self.session: Any = None
        self.kernels: dict[int, int] = {}


def _static(autotuner: Any, session: Any) -> _Static:
    found = autotuner.__dict__.get(_STATIC)
    if found is None:
        found = autotuner.__dict__[_STATIC] = _Static(autotuner)
    if found.session is not session:
        found.session = session
        found.kernels = {}
    return found


def install() -> None:
    global _ORIGINAL
    if _ORIGINAL is not None:
        return
    try:
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    except ImportError:
        return  # torch without Triton: no Triton launches to record

    original = _ORIGINAL = CachingAutotuner.run
    local = _session.LOCAL
    native_thread = threading.get_native_id

    # Every Inductor launch comes through here, so this is kept lean: one
    # native call before the launch and one after.
    def run(self: Any, *args: Any, stream: Any, **kwargs: Any) -> Any:
        session = _session.ACTIVE
        if session is None:
            return original(self, *args, stream=stream, **kwargs)
        try:
            static = self.__dict__.get(_STATIC)
            if static is None or static.session is not session:
                static = _static(self, session)
            if session.kernels != "*" and not session.wants(static.name):
                return original(self, *args, stream=stream, **kwargs)
            described = session.file.describe(
                args, static.codes, session.hash_inputs, session.device_hashing, stream
            )
            if session.breaks is not None:
                session.before_launch(static.name)
        except Exception as e:
            session.fail(e)
            return original(self, *args, stream=stream, **kwargs)
        local.depth = getattr(local, "depth", 0) + 1
        try:
            result = original(self, *args, stream=stream, **kwargs)
        finally:
            local.depth -= 1
        try:
            config = self.launchers[0].config if self.launchers else self.configs[0]
            kernel = static.kernels.get(id(config))
            if kernel is None:
                kernel = static.kernels[id(config)] = session.kernel_id(
                    ("triton", id(self), id(config)),
                    lambda: _define(session, self, static, config),
                )
            session.file.launch(
                described,
                kernel,
                _grid(self, static, config, args),
                stream or 0,
                native_thread(),
                session.hash_outputs,
                session.stats,
            )
            if described.gpu_error:
                session.gpu_failed(described.gpu_error)
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
        positions = [i for i, a in enumerate(args) if not isinstance(a, torch.Tensor)]
        static.scalars = operator.itemgetter(*positions) if positions else lambda _: ()
    key = (id(config), static.scalars(args))
    grid = static.grids.get(key)
    if grid is None:
        _, computed = autotuner._interpret_args_grid(args, config)
        grid = static.grids[key] = [int(g) for g in computed]
    return grid


def _define(session: Any, autotuner: Any, static: _Static, config: Any) -> dict[str, Any]:
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
        "name": static.name,
        "backend": "user-triton" if user else "triton",
        "args": [
            {"name": n, "type": str(signature.get(n, "")), "access": a}
            for n, a in zip(static.names, static.access, strict=False)
        ],
        "source": source,
        "meta": meta,
        "config": {k: _meta_scalar(v) for k, v in items.items()},
    }

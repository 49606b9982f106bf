"""Inductor's Triton launches: a class-level patch of
``CachingAutotuner.run``. Benchmark launches made while autotuning happen
inside ``run`` through the launchers directly, so they are never seen here
and never recorded as program launches."""

from __future__ import annotations

from typing import Any

from . import _session, _tensors

_ORIGINAL: Any = None


def install() -> None:
    global _ORIGINAL
    if _ORIGINAL is not None:
        return
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    _ORIGINAL = CachingAutotuner.run

    def run(self: Any, *args: Any, stream: Any, **kwargs: Any) -> Any:
        session = _session.active()
        name = _kernel_name(self)
        if session is None or not session.wants(name):
            return _ORIGINAL(self, *args, stream=stream, **kwargs)
        try:
            names = _arg_names(self)
            mutated = set(self.mutated_arg_names)
            hashes = _tensors.Hashes(stream)
            prepared = [
                _tensors.prepare(session, a, hashes, access=_access(n, mutated))
                for n, a in zip(names, args, strict=False)
            ]
        except Exception as e:
            session.fail(e)
            return _ORIGINAL(self, *args, stream=stream, **kwargs)
        with _session.inside_launch():
            result = _ORIGINAL(self, *args, stream=stream, **kwargs)
        try:
            _record(session, self, name, names, args, prepared, stream, hashes)
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


def _arg_names(autotuner: Any) -> list[str]:
    """Names of the positional arguments ``run`` gets: the signature without
    constexprs, then Inductor's extra launcher arguments."""
    signature = autotuner.triton_meta["signature"]
    names = [n for n, t in signature.items() if t != "constexpr"]
    return names + list(autotuner.inductor_meta.get("extra_launcher_args", ()))


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


def _record(
    session: Any,
    autotuner: Any,
    name: str,
    names: list[str],
    args: tuple[Any, ...],
    prepared: list[Any],
    stream: Any,
    hashes: Any,
) -> None:
    config = _config(autotuner)
    _, grid = autotuner._interpret_args_grid(args, config)
    mutated = set(autotuner.mutated_arg_names)
    signature = autotuner.triton_meta["signature"]
    config_items = {**config.kwargs, "num_warps": config.num_warps, "num_stages": config.num_stages}
    key = ("triton", name, autotuner.filename, tuple(sorted(config_items.items())))

    def define() -> dict[str, Any]:
        meta_keys = (
            "atomic_add_found",
            "deterministic",
            "are_deterministic_algorithms_enabled",
            "grid_type",
            "reduction_hint",
        )
        meta = {k: _meta_scalar(autotuner.inductor_meta.get(k)) for k in meta_keys}
        meta["heuristic"] = str(autotuner.heuristic_type)
        meta["mutated_arg_names"] = ",".join(sorted(mutated))
        user = (
            autotuner.heuristic_type.name == "USER_AUTOTUNE"
            if hasattr(autotuner.heuristic_type, "name")
            else False
        )
        return {
            "name": name,
            "backend": "user-triton" if user else "triton",
            "args": [
                {"name": n, "type": str(signature.get(n, "")), "access": _access(n, mutated)}
                for n in names
            ],
            "source": session.source_id(autotuner.filename, "python")
            if autotuner.filename
            else None,
            "meta": meta,
            "config": {k: _meta_scalar(v) for k, v in config_items.items()},
        }

    kernel = session.kernel_id(key, define)
    tensors = [a for a in args if hasattr(a, "device")]
    device = _tensors.device_index(tensors[0]) if tensors else -1
    encoded = [
        _tensors.finish(session, p, _access(n, mutated) != "in", hashes)
        for n, p in zip(names, prepared, strict=False)
    ]
    session.launch(kernel, grid, stream or 0, device, encoded, hashes)

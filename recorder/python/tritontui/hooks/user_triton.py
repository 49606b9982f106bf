"""User-written Triton kernels launched eagerly (``kernel[grid](...)``
outside ``torch.compile``): a patch of ``JITFunction.run`` (and of the
interpreter's ``InterpretedFunction.run``). Arguments are bound by the
kernel's parameter names; a kernel declares no outputs, so an argument
counts as written when its hash changes. Launches made inside a recorded
Inductor launch are that launch's and are skipped."""

from __future__ import annotations

import inspect
from typing import Any

import torch

from .. import _active

# (class, original run) for each patched class.
_ORIGINALS: list[tuple[type, Any]] = []


def _classes() -> list[type]:
    from triton.runtime.jit import JITFunction

    classes: list[type] = [JITFunction]
    try:
        from triton.runtime.interpreter import InterpretedFunction

        classes.append(InterpretedFunction)
    except ImportError:
        pass
    return classes


def install() -> None:
    if _ORIGINALS:
        return
    try:
        classes = _classes()
    except ImportError:
        return  # no Triton: nothing to record
    for cls in classes:
        original = cls.run
        cls.run = _patched(original)
        _ORIGINALS.append((cls, original))


def uninstall() -> None:
    while _ORIGINALS:
        cls, original = _ORIGINALS.pop()
        cls.run = original


def _patched(original: Any) -> Any:
    def run(self: Any, *args: Any, grid: Any, warmup: Any, **kwargs: Any) -> Any:
        session = _active.active()
        if session is None or warmup or _active.in_launch():
            return original(self, *args, grid=grid, warmup=warmup, **kwargs)
        name = getattr(self.fn, "__name__", "triton_kernel")
        if not session.wants(name):
            return original(self, *args, grid=grid, warmup=warmup, **kwargs)
        try:
            with _active.dynamo_off():
                bound = dict(zip(self.arg_names, args, strict=False))
                bound.update((k, v) for k, v in kwargs.items() if k in self.arg_names)
                runtime = [n for n in self.arg_names if n in bound and not _is_constexpr(self, n)]
                tensors = [bound[n] for n in runtime if isinstance(bound[n], torch.Tensor)]
                stream = _stream(tensors)
                values, codes = [bound[n] for n in runtime], b"i" * len(runtime)
                described = session.describe(values, codes, stream=stream, launch=True)
                # Its values copied (`capture`), its own hash taken, where asked.
                observed = session.observe_before(name, values, codes)
                if session.breaks is not None:
                    session.before_launch(name)
        except Exception as e:
            session.launch_unrecorded(name, e)
            return original(self, *args, grid=grid, warmup=warmup, **kwargs)
        with _active.inside_launch():
            result = original(self, *args, grid=grid, warmup=warmup, **kwargs)
        try:
            with _active.dynamo_off():
                constants = {
                    k: v for k, v in {**bound, **kwargs}.items() if k not in runtime and _plain(v)
                }
                kernel = session.kernel_id(
                    ("user-triton", id(self), tuple(sorted(constants.items()))),
                    lambda: _define(session, self, name, runtime, bound, constants),
                )
                launch_grid = grid({**bound, **kwargs}) if callable(grid) else grid
                launch_grid = [int(g) for g in launch_grid]
                launch_grid += [1] * (3 - len(launch_grid))
                seq = session.launch(kernel, launch_grid, stream or 0, described)
                if observed is not None:
                    session.observe_after(observed, seq)
        except Exception as e:
            session.fail(e)
        return result

    return run


def _is_constexpr(fn: Any, name: str) -> bool:
    for p in getattr(fn, "params", ()):
        if p.name == name:
            return bool(p.is_constexpr)
    # The interpreter keeps no parameter kinds; annotations say it.
    annotation = inspect.signature(fn.fn).parameters[name].annotation
    return "constexpr" in str(annotation)


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _stream(tensors: list[torch.Tensor]) -> int | None:
    for t in tensors:
        if t.device.type == "cuda":
            return torch.cuda.current_stream(t.device).cuda_stream
    return None


def _define(
    session: Any, fn: Any, name: str, runtime: list[str], bound: dict[str, Any], constants: dict
) -> dict[str, Any]:
    try:
        path = inspect.getsourcefile(fn.fn) or ""
        text = inspect.getsource(fn.fn)
    except (OSError, TypeError):
        path, text = "", ""
    source = session.source_id(path, "python", text) if text else None
    return {
        "name": name,
        "backend": "user-triton",
        "args": [
            {
                "name": n,
                "type": str(bound[n].dtype) if isinstance(bound[n], torch.Tensor) else "",
                "access": "in",
            }
            for n in runtime
        ],
        "source": source,
        "meta": {},
        "config": constants,
    }

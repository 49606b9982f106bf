"""Record the kernel launches of ``torch.compile`` programs for tritontui.

    import tritontui

    with tritontui.record("run0.msgpack"):
        loss = compiled_model(x).sum()
        loss.backward()

Then compare two recordings with ``tritontui run0.msgpack run1.msgpack``.
Without code changes: ``TRITONTUI_RECORD=run0.msgpack python train.py``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from . import _active, _hook_symbol
from ._native import HASH_ALGORITHM, hash_bytes

# Before any package or graph compiled with the C++-wrapper hooks loads.
_hook_symbol.make_global()

if TYPE_CHECKING:
    from ._check import DeterminismReport, assert_deterministic, check_determinism

__version__ = "0.1.0"
__all__ = [
    "HASH_ALGORITHM",
    "DeterminismReport",
    "assert_deterministic",
    "check_determinism",
    "compile_package",
    "hash_bytes",
    "hash_tensor",
    "is_recording",
    "mark",
    "record",
    "start",
    "stop",
]


def start(
    path: str | os.PathLike[str],
    *,
    hash: str = "both",
    aten: bool = True,
    kernels: str = "*",
    stats: bool = False,
    break_at: str | None = None,
    capture: str | None = None,
    capture_budget: int | None = None,
    hash_fn: Any = None,
    cuda_graphs: bool | None = None,
) -> None:
    """Starts recording to ``path`` (``{pid}`` and ``{rank}`` are filled in).

    ``hash``: which argument values are hashed: ``"both"`` (before and
    after each launch), ``"inputs"``, ``"outputs"``, or ``"none"``.
    ``aten``: record aten ops too. ``kernels``: a glob of the kernel names
    to record. ``stats``: also record min, max, mean |x| and NaN/Inf counts
    of floating tensors. ``break_at``: pause points, comma-separated launch
    numbers and kernel-name globs (default: ``TRITONTUI_BREAK``); the
    process stops before each and waits to be resumed. ``capture``:
    launches whose tensors are copied by value before and after them,
    comma-separated launch numbers, ranges (``40-45``) and kernel-name
    globs (default: ``TRITONTUI_CAPTURE``), written beside the trace in
    ``TRACE.values/``, at most ``capture_budget`` bytes (default:
    ``TRITONTUI_CAPTURE_BUDGET``, else 2 GB). ``hash_fn``: a hash
    function of your own run on every recorded tensor before and after
    each launch, beside the exact hashes: a callable (tensor to number or
    string, recorded under its ``__name__``) or DebugMode's ``"norm"`` or
    ``"hash_tensor"`` (default: ``TRITONTUI_HASH_FN``); where a tensor has
    no exact hash, runs are compared by its values (equal or not).
    ``cuda_graphs``: leave CUDA graphs as the program configured them and
    record every replay (the default, unless ``TRITONTUI_CUDA_GRAPHS=0``),
    or with False turn them off while recording (the header says so)."""
    from . import _session, _spawned_ranks

    _session.start(
        path,
        hash=hash,
        aten=aten,
        kernels=kernels,
        stats=stats,
        break_at=break_at,
        capture=capture,
        capture_budget=capture_budget,
        hash_fn=hash_fn,
        cuda_graphs=cuda_graphs,
    )
    _spawned_ranks.install()


def stop() -> None:
    """Stops recording and completes the trace."""
    from . import _session

    _session.stop()


@contextlib.contextmanager
def record(path: str | os.PathLike[str], **options: Any) -> Iterator[None]:
    """Records the launches made inside the ``with`` block; see :func:`start`."""
    start(path, **options)
    try:
        yield
    finally:
        stop()


def compile_package(exported: Any, package_path: Any = None, **kwargs: Any) -> str:
    """``torch._inductor.aoti_compile_and_package(exported, package_path,
    ...)`` with the recorder's hooks compiled in: the package then records
    its launches wherever it is loaded and run while recording, and runs as
    the stock one elsewhere (the hooks are a weak symbol nobody else
    defines, checked before each call). Returns the package's path."""
    import torch

    from .hooks import cpp_wrapper

    with cpp_wrapper.codegen_hooks():
        return torch._inductor.aoti_compile_and_package(
            exported, package_path=package_path, **kwargs
        )


def is_recording() -> bool:
    """Whether a recording is in progress."""
    return _active.active() is not None


def mark(label: str) -> None:
    """Puts a marker between launches (shown in the trace); no-op when not recording."""
    session = _active.active()
    if session is not None:
        try:
            with _active.dynamo_off():
                session.mark(label)
        except Exception as e:
            session.fail(e)


def hash_tensor(tensor: Any) -> int | None:
    """``tthash64-v1`` of a tensor's logical bytes (None if unreadable)."""
    from . import _tensors

    return _tensors.hash_tensor(tensor)


# The determinism check is imported on first use: the tritontui command
# imports this package and starts faster without it.
_CHECK_NAMES = ("DeterminismReport", "assert_deterministic", "check_determinism")


def __getattr__(name: str) -> Any:
    if name in _CHECK_NAMES:
        from . import _check

        return getattr(_check, name)
    raise AttributeError(f"module 'tritontui' has no attribute {name!r}")

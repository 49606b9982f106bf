"""Record the kernel launches of ``torch.compile`` programs for tritontui.

    import tritontui

    with tritontui.record("run0.msgpack"):
        loss = compiled_model(x).sum()
        loss.backward()

Then compare two recordings with ``tritontui run0.msgpack run1.msgpack``.
Without code changes: ``TRITONTUI_RECORD=run0.msgpack python train.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _active, _hook_symbol
from ._native import HASH_ALGORITHM, hash_bytes
from ._recording import record, start, stop
from ._version import __version__ as __version__

# Before any package or graph compiled with the C++-wrapper hooks loads.
_hook_symbol.make_global()

if TYPE_CHECKING:
    from ._batch_check import (
        BatchInvarianceReport,
        assert_batch_invariant,
        check_batch_invariance,
    )
    from ._check import DeterminismReport, assert_deterministic, check_determinism

__all__ = [
    "HASH_ALGORITHM",
    "BatchInvarianceReport",
    "DeterminismReport",
    "assert_batch_invariant",
    "assert_deterministic",
    "check_batch_invariance",
    "check_determinism",
    "compile_package",
    "hash_bytes",
    "hash_tensor",
    "is_recording",
    "mark",
    "record",
    "start",
    "step",
    "stop",
]


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


def step() -> None:
    """Ends a training step, for loops without an optimizer (an
    optimizer's ``step()`` ends one by itself; whichever of the two ends
    a step first counts the steps): the trace says which step each
    launch ran in, ``fingerprint`` recordings fingerprint the model's
    parameters here, and ``from_step``/``to_step`` count these. No-op
    when not recording."""
    session = _active.active()
    if session is not None:
        try:
            with _active.dynamo_off():
                session.step_ended("user")
        except Exception as e:
            session.fail(e)


def hash_tensor(tensor: Any) -> int | None:
    """``tthash64-v1`` of a tensor's logical bytes (None if unreadable)."""
    from . import _tensors

    return _tensors.hash_tensor(tensor)


# The determinism check is imported on first use: the tritontui command
# imports this package and starts faster without it.
_CHECK_NAMES = ("DeterminismReport", "assert_deterministic", "check_determinism")
_BATCH_CHECK_NAMES = ("BatchInvarianceReport", "assert_batch_invariant", "check_batch_invariance")


def __getattr__(name: str) -> Any:
    if name in _CHECK_NAMES:
        from . import _check

        return getattr(_check, name)
    if name in _BATCH_CHECK_NAMES:
        from . import _batch_check

        return getattr(_batch_check, name)
    raise AttributeError(f"module 'tritontui' has no attribute {name!r}")

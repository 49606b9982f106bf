"""A hash function of the program's own (``record(hash_fn=...)``): run on
each recorded launch's tensors before and after it, in addition to the
trace's exact hashes, and written in ``custom_hash`` records. The engine
compares its values for equality only, where a tensor has no exact hash.

``hash_fn`` is a callable taking a tensor and returning a number, a bool
or a string (a 0-d tensor is read with ``.item()``, anything else with
``str``), recorded under its ``__name__``; or a name DebugMode users know:
``"norm"`` (DebugMode's ``norm_hash_fn``, the L1 norm in float64) or
``"hash_tensor"`` (its ``hash_tensor_fn``). ``TRITONTUI_HASH_FN`` names
one of those for a program that does not call ``record`` itself."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from . import _active

KNOWN = ("norm", "hash_tensor")


def resolve(hash_fn: str | Callable[[torch.Tensor], Any] | None) -> CustomHash | None:
    """The custom hash asked for (the ``hash_fn`` option), or None."""
    if hash_fn is None:
        return None
    if isinstance(hash_fn, str):
        from torch.utils import _debug_mode

        if hash_fn not in KNOWN:
            raise ValueError(f"hash_fn must be a callable or one of {KNOWN}, not {hash_fn!r}")
        function = getattr(
            _debug_mode, f"{hash_fn}_hash_fn" if hash_fn == "norm" else "hash_tensor_fn"
        )
        return CustomHash(hash_fn, lambda t: function(t, use_scalar=True))
    if not callable(hash_fn):
        raise ValueError(f"hash_fn must be a callable or one of {KNOWN}, not {hash_fn!r}")
    return CustomHash(getattr(hash_fn, "__name__", type(hash_fn).__name__), hash_fn)


class CustomHash:
    """Hashes launches' tensors with one function."""

    def __init__(self, name: str, function: Callable[[torch.Tensor], Any]) -> None:
        self.name = name
        self.function = function

    def value(self, tensor: torch.Tensor) -> Any:
        """The function's value for ``tensor``, as the trace keeps it."""
        with _active.inside_launch():
            value = self.function(tensor)
        if isinstance(value, torch.Tensor) and value.numel() == 1:
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            return str(value)  # JSON has no NaN or inf
        if isinstance(value, (bool, int, float, str)):
            return value
        return str(value)

    def before(self, values: list[Any], codes: bytes) -> dict[int, Any]:
        """The values of the tensors a launch reads, by argument index."""
        return {
            i: self.value(v)
            for i, (v, code) in enumerate(zip(values, codes, strict=False))
            if _hashable(v) and chr(code) in "ix"
        }

    def after(
        self, before: dict[int, Any], values: list[Any], codes: bytes, results: list[Any] | None
    ) -> list[tuple[int, Any, Any]]:
        """What the function gave for a launch's tensors: each argument's
        index, its value before (from ``before``) and after; an op's new
        results are numbered after its arguments."""
        codes = codes + b"o" * len(results or [])
        tensors = [*values, *(results or [])]
        return [
            (i, before.get(i), None if chr(code) == "a" else self.value(v))
            for i, (v, code) in enumerate(zip(tensors, codes, strict=False))
            if _hashable(v)
        ]


def _hashable(value: Any) -> bool:
    return (
        isinstance(value, torch.Tensor)
        and value.layout == torch.strided
        and value.device.type != "meta"
        and not value.is_quantized
    )

"""Values the host copies out of tensors without a dispatched op
(``Tensor.tolist``; ``Tensor.item`` while fingerprints are recorded
with no aten op observed), recorded as launches of a kernel marked
``host_read`` while recording with aten ops: what the program reads out
of its tensors is part of its results, even when no tensor is left at
the end. (``.item()`` is the dispatched ``aten::_local_scalar_dense``,
which the aten recorder marks the same way. ``Tensor.numpy`` shares the
tensor's memory, to read or to write, so it is no read by itself: an
array still alive when recording stops is among the results.)"""

from __future__ import annotations

import functools
from typing import Any

import torch

from .. import _active, _tensors

_METHODS = ("tolist",)
# The methods replaced while recording, by name.
_ORIGINALS: dict[str, Any] = {}
# Whether an optimizer's ``step()`` runs now while only fingerprints are
# recorded: its reads (of its step counts) are its own, held in its state
# and fingerprinted with it, and are let go before anything else is
# asked (AdamW reads each parameter's step count: dozens a step, right
# after kernels, when every call the hook makes costs the most). The
# session sets it as the step begins and clears it as it ends.
in_fingerprinted_optimizer_step = False


def install(item: bool = False) -> None:
    """Replaces the host-read methods; with ``item`` ``Tensor.item`` too
    (while fingerprints are recorded with no aten op observed, where
    ``.item()``'s ``aten::_local_scalar_dense`` is not seen)."""
    for name in _METHODS + (("item",) if item else ()):
        if name not in _ORIGINALS:
            original = getattr(torch.Tensor, name)
            _ORIGINALS[name] = original
            setattr(torch.Tensor, name, _recording(f"Tensor.{name}", original))


def uninstall() -> None:
    global in_fingerprinted_optimizer_step
    in_fingerprinted_optimizer_step = False
    for name, original in list(_ORIGINALS.items()):
        setattr(torch.Tensor, name, original)
        del _ORIGINALS[name]


def _recording(kernel_name: str, original: Any) -> Any:
    @functools.wraps(original)
    def read(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        if in_fingerprinted_optimizer_step:
            return original(self, *args, **kwargs)
        session = _active.active()
        if (
            session is not None
            and not _active.in_launch()
            and _tensors.is_hashable(self)
            and session.wants(kernel_name)
        ):
            try:
                with _active.dynamo_off():
                    _record(session, kernel_name, self)
            except Exception as e:
                session.fail(e)
        return original(self, *args, **kwargs)

    return read


def _record(session: Any, kernel_name: str, tensor: torch.Tensor) -> None:
    if session.breaks is not None:
        session.before_launch(kernel_name)
    described = session.describe([tensor], b"i")
    kernel = session.kernel_id(
        ("host_read", kernel_name),
        lambda: {
            "name": kernel_name,
            "backend": "aten",
            "args": [{"name": "self", "type": "", "access": "in"}],
            "source": None,
            "meta": {"host_read": True},
            "config": {},
        },
    )
    session.launch(kernel, [], 0, described)

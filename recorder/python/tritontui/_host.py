"""Host arguments (anything passed to a launch that is neither a tensor
nor a number, bool, None or str) as the trace records them: by what
determines the launch's results, never by identity.

A ``torch.Generator`` is its device, seed and a hash of its state; a
collective's process group is its name, backend and global ranks, its
reduce op by name; a value whose repr is data (a dtype, a device, a list
of sizes) is that repr; anything else (profiler handles, streams, events,
objects whose repr shows an address) is its type alone, written
``<object TYPE>`` so readers know it says nothing about the value. See
docs/trace-format.md, "Host objects"."""

from __future__ import annotations

import re
from typing import Any

import torch

from . import _active, _tensors
from ._native import hash_bytes

# The longest repr kept for a host argument; longer ones become the type.
MAX_REPR = 120
# An address or an identity in a repr: it differs between runs.
_IDENTITY = re.compile(r"0x[0-9a-fA-F]{4,}|\bobject at\b|\bid=\d+")


# Host values whose repr is the whole of their value and never changes
# (a dtype, a layout, a memory format, a device), and the text of each
# met so far: a handful, asked for again at every op that takes one.
_SETTLED = (torch.dtype, torch.layout, torch.memory_format, torch.device)
_SETTLED_TEXT: dict[Any, str] = {}


def host_value(value: Any) -> str:
    """The trace's text for host argument ``value``. Whatever torch does to
    produce it (printing a sparse tensor reads its values) is the
    recorder's work, not the program's, and is not recorded."""
    if type(value) in _SETTLED:
        text = _SETTLED_TEXT.get(value)
        if text is None:
            text = _SETTLED_TEXT[value] = repr(value)
        return text
    with _active.inside_launch():
        if isinstance(value, torch.Generator):
            return generator_value(value)
        if isinstance(value, torch.ScriptObject):
            described = _c10d_value(value)
            if described is not None:
                return described
        try:
            text = repr(value)
        except Exception:
            # A repr that fails says nothing of the value; the launch is
            # still recorded, with the argument's type.
            return opaque(value)
    if len(text) > MAX_REPR or _IDENTITY.search(text):
        return opaque(value)
    return text


def opaque(value: Any) -> str:
    """``<object torch.ScriptObject>``: the type, and nothing about the value."""
    kind = type(value)
    return f"<object {kind.__module__}.{kind.__qualname__}>"


# What a CUDA generator says of its state while a CUDA graph captures: a
# captured random op draws at each replay from an offset the graph advances
# (torch refuses to read the offset during a capture).
PER_REPLAY = "offset=per-replay"


def _capturing(device: torch.device) -> bool:
    """Whether a CUDA graph captures on ``device``'s current stream."""
    return device.type == "cuda" and torch.cuda.is_current_stream_capturing()


def generator_value(generator: torch.Generator) -> str:
    """``<torch.Generator device=cpu seed=S state=H>``: what it will draw next."""
    if _capturing(generator.device):
        return (
            f"<torch.Generator device={generator.device} seed={generator.initial_seed()} "
            f"{PER_REPLAY}>"
        )
    state = _tensors.host_bytes(generator.get_state())
    return (
        f"<torch.Generator device={generator.device} seed={generator.initial_seed()} "
        f"state={hash_bytes(state):016x}>"
    )


def default_generator_value(device: torch.device) -> str:
    """``<default generator cuda:0 seed=S offset=O>`` (a CUDA generator's
    state is its seed and Philox offset; while a CUDA graph captures,
    ``offset=per-replay``) or ``<default generator cpu seed=S state=H>``:
    what a random op on ``device`` that is given no generator draws from
    next."""
    with _active.inside_launch():
        if device.type == "cuda":
            index = device.index if device.index is not None else torch.cuda.current_device()
            generator = torch.cuda.default_generators[index]
            offset = PER_REPLAY if _capturing(device) else f"offset={generator.get_offset()}"
            return f"<default generator cuda:{index} seed={generator.initial_seed()} {offset}>"
        if device.type == "cpu":
            generator = torch.default_generator
            state = _tensors.host_bytes(generator.get_state())
            return (
                f"<default generator cpu seed={generator.initial_seed()} "
                f"state={hash_bytes(state):016x}>"
            )
    return f"<default generator {device}>"


def _c10d_value(value: torch.ScriptObject) -> str | None:
    """A process group as ``<ProcessGroup name=N backend=B ranks=R>`` (R: its
    members' global ranks, comma-separated, in group order) and a reduce op
    as ``<ReduceOp SUM>``, as the dispatcher hands them to a c10d op; None
    for another object."""
    kind = str(value._type())
    c10d = torch._C._distributed_c10d
    if kind.endswith(".c10d.ProcessGroup"):
        group = c10d.ProcessGroup.unbox(value)
        return process_group_value(group)
    if kind.endswith(".c10d.ReduceOp"):
        return f"<ReduceOp {c10d.ReduceOp.RedOpType(value.op()).name}>"
    return None


def process_group_value(group: Any) -> str:
    """``<ProcessGroup name=N backend=B ranks=R>`` for a c10d process group."""
    import torch.distributed as dist

    try:
        ranks = ",".join(str(r) for r in dist.get_process_group_ranks(group))
    except (RuntimeError, ValueError, KeyError):
        ranks = "?"  # a group torch.distributed does not know (built by hand)
    return f"<ProcessGroup name={group.group_name} backend={group.name()} ranks={ranks}>"

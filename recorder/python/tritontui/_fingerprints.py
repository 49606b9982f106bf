"""Fingerprints (``fingerprint``, and the steps before ``from_step``): a
compiled graph call's outputs and the inputs it wrote, hashed after it
returns, and the training state at a step's end, hashed then, each
written as a launch of a kernel of its own (meta ``fingerprint``:
``call`` or ``state``) with no launch inside it recorded. Its tensors'
hashes are folded into one (meta ``digest``: the writer thread folds
them once they are delivered, into the launch's one scalar argument), so
that a step costs the trace tens of bytes. An autograd forward's
activations saved for its backward are left out: they reach the program
only through the backward, whose gradients are fingerprinted. Host reads
and collectives are fingerprinted as the aten recorder records them.
Comparing two runs' fingerprints in order finds the step where they
first part (``tritontui diff``, ``check --steps``)."""

from __future__ import annotations

import sys
from typing import Any

import torch

# The most tensors one fingerprint launch holds (a call's outputs, a step's
# state, split into launches of at most this many).
PER_LAUNCH = 512


def graph_call(session: Any, graph: str, values: list[Any]) -> None:
    """Graph ``graph``'s call just returned what ``values`` hold (its
    outputs, then the inputs it wrote): their tensors hashed now, on each
    tensor's current stream. A call inside a CUDA graph's capture is not:
    its outputs are not there yet (a ``gap`` says so, once)."""
    if _captured(values):
        if not session.said_captured_fingerprint:
            session.said_captured_fingerprint = True
            session.record_gap(
                "fingerprint",
                f"graph {graph} was called inside a CUDA graph capture: its outputs were "
                "not fingerprinted",
            )
        return
    for start in range(0, max(len(values), 1), PER_LAUNCH):
        _write(session, "call", f"graph {graph}", "outputs", values[start : start + PER_LAUNCH])


# Where AOTAutograd's ``CompiledFunction.forward`` calls a compiled forward
# graph, and how many frames above the graph's call it may be.
_AUTOGRAD_FORWARD = "torch/_functorch/_aot_autograd/runtime_wrappers.py"
_FRAMES_UP = 8


# Where each graph's outputs hold what its autograd forward saves for its
# backward (None: nowhere, or nowhere it can place exactly), by graph name
# (its FX-graph cache key, which names its code and so its outputs) and
# output count, found at its first call. One graph is called one way: a
# training graph's forward only ever by its autograd forward. Walking the
# stack at every call would cost more than the fingerprint: right after a
# graph's kernels the interpreter runs from a cold cache (~1 us a frame).
_SAVED: dict[tuple[str, int], slice | None] = {}


def reaching_the_program(graph: str, outputs: list[Any]) -> list[Any]:
    """What of graph ``graph``'s call's ``outputs`` reaches the program
    outside its backward: all of them, less the tensors an autograd
    forward saves for its backward where the call is one (AOTAutograd's
    ``CompiledFunction.forward`` above it, whose metadata places them
    among the outputs). Where it cannot place them exactly (effect tokens
    before the outputs, a slice that does not fit them), all of them."""
    key = (graph, len(outputs))
    if key not in _SAVED:
        _SAVED[key] = _saved_for_backward(len(outputs))
    saved = _SAVED[key]
    if saved is None:
        return outputs
    return [*outputs[: saved.start], *outputs[saved.stop :]]


def _saved_for_backward(count: int) -> slice | None:
    """Where a graph call's ``count`` outputs hold the tensors saved for
    its backward, when an autograd forward made the call."""
    frame = sys._getframe(2)
    for _ in range(_FRAMES_UP):
        if frame is None:
            return None
        code = frame.f_code
        if (
            code.co_name == "forward"
            and "CompiledFunction" in code.co_freevars
            and code.co_filename.endswith(_AUTOGRAD_FORWARD)
        ):
            return _saved_by(frame, count)
        frame = frame.f_back
    return None


def _saved_by(forward: Any, count: int) -> slice | None:
    """Where the autograd forward running in frame ``forward`` places the
    tensors it saves among its graph's ``count`` outputs."""
    try:
        metadata = forward.f_locals["CompiledFunction"].metadata
        start, stop, step = metadata.tensors_saved_for_backwards_slice.indices(count)
        # Effect tokens would come first, past the metadata's count.
        tokens = len(metadata.tokens)
    except Exception:
        return None
    if tokens or step != 1 or not 0 < start <= stop <= count:
        return None
    return slice(start, stop)


def _captured(values: list[Any]) -> bool:
    """Whether CUDA tensors among ``values`` are being captured into a CUDA
    graph (no stream captures before CUDA is initialized)."""
    return (
        torch.cuda.is_initialized()
        and torch.cuda.is_current_stream_capturing()
        and any(isinstance(v, torch.Tensor) and v.is_cuda for v in values)
    )


def state(session: Any, held: list[Any]) -> None:
    """The training state at a step's end (``_results.Live`` each: the
    tensor and its name), hashed now."""
    for start in range(0, len(held), PER_LAUNCH):
        chunk = [live.tensor for live in held[start : start + PER_LAUNCH]]
        _write(session, "state", "step state", "state", chunk)


def _write(session: Any, what: str, name: str, arg: str, values: list[Any]) -> None:
    """One fingerprint launch of kernel ``name`` over the tensors among
    ``values`` whose bytes can be hashed (the state read and hashed before,
    or the outputs written and hashed after), their hashes folded into its
    one argument ``arg``: the tensors found and described natively
    (``TraceFile.fingerprint``), with no Python per tensor."""
    before = what == "state"
    kernel = session.kernel_id(
        ("fingerprint", what, name),
        lambda: {
            "name": name,
            "backend": "tritontui",
            "args": [{"name": arg, "type": "", "access": "in" if before else "out"}],
            "source": None,
            "meta": {"fingerprint": what, "digest": True},
            "config": {},
        },
    )
    error = session.file.fingerprint(
        kernel, values, before, session.device_hashing, session.hook_options.after
    )
    if error:
        session.gpu_failed(error)

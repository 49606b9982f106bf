"""Fingerprints (``fingerprint``, and the steps before ``from_step``): a
compiled graph call's outputs and the inputs it wrote, hashed after it
returns, and the training state at a step's end, hashed then, each
written as a launch of a kernel of its own (meta ``fingerprint``:
``call`` or ``state``) with no launch inside it recorded. Its tensors'
hashes are folded into one (meta ``digest``: the writer thread folds
them once they are delivered, into the launch's one scalar argument), so
that a step costs the trace tens of bytes. Host reads and collectives
are fingerprinted as the aten recorder records them.
Comparing two runs' fingerprints in order finds the step where they
first part (``tritontui diff``, ``check --steps``)."""

from __future__ import annotations

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

"""Starting and stopping a recording: the API's ``start``, ``stop`` and
``record`` (re-exported by the package), in a module of their own so that
the package's other modules can use them without importing the package."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any


def start(
    path: str | os.PathLike[str],
    *,
    hash: str | None = None,
    aten: bool | None = None,
    kernels: str | None = None,
    stats: bool | None = None,
    samples: bool | None = None,
    rows: bool | None = None,
    break_at: str | None = None,
    capture: str | None = None,
    capture_budget: int | None = None,
    hash_fn: Any = None,
    cuda_graphs: bool | None = None,
    fingerprint: bool | None = None,
    from_step: int | None = None,
    to_step: int | None = None,
) -> None:
    """Starts recording to ``path`` (``{pid}`` and ``{rank}`` are filled in).

    Each option not given (None) is read from its ``TRITONTUI_*``
    environment variable, else takes its default (in brackets).
    ``hash`` (``TRITONTUI_HASH``, both): which argument values are hashed:
    ``"both"`` (before and after each launch), ``"inputs"``, ``"outputs"``,
    or ``"none"``. ``aten`` (``TRITONTUI_ATEN``, on): record aten ops too.
    ``kernels`` (``TRITONTUI_KERNELS``, ``*``): a glob of the kernel names
    to record. ``stats`` (``TRITONTUI_STATS``, off): also record min, max,
    mean |x| and NaN/Inf counts of floating tensors. ``samples``
    (``TRITONTUI_SAMPLES``, off): also keep 32 elements of every floating
    tensor a launch writes, at positions that depend on its shape alone
    (and its statistics), so that ``tritontui diff`` can say how far two
    different programs' numerics part (eager against compiled, two
    configs, fp32 against bf16) and whether within what the arithmetic
    allows. ``rows`` (``TRITONTUI_ROWS``, off): also hash each row of
    every tensor argument after each launch (each index of its leading
    dimension, as if it were a tensor by itself, up to 1,024 rows a
    tensor), so that one request alone can be compared with the same
    request inside a batch. ``break_at``
    (``TRITONTUI_BREAK``): pause points, comma-separated launch numbers and
    kernel-name globs; the process stops before each and waits to be
    resumed. ``capture`` (``TRITONTUI_CAPTURE``): launches whose tensors
    are copied by value before and after them, comma-separated launch
    numbers, ranges (``40-45``) and kernel-name globs, written beside the
    trace in ``TRACE.values/``, at most ``capture_budget``
    (``TRITONTUI_CAPTURE_BUDGET``, 2 GB) bytes. ``hash_fn``
    (``TRITONTUI_HASH_FN``): a hash function of your own run on every
    recorded tensor before and after each launch, beside the exact hashes:
    a callable (tensor to number or string, recorded under its
    ``__name__``) or DebugMode's ``"norm"`` or ``"hash_tensor"``; where a
    tensor has no exact hash, runs are compared by its values (equal or
    not). ``cuda_graphs`` (``TRITONTUI_CUDA_GRAPHS``, on): leave CUDA
    graphs as the program configured them and record every replay, or
    with False turn them off while recording (the header says so).
    ``fingerprint`` (``TRITONTUI_FINGERPRINT``, off): record only
    fingerprints, for long runs: each compiled graph call's outputs (and
    the inputs it wrote; an autograd forward's less the activations it
    saves for its backward), each host read and collective, and the
    parameters and optimizer state at each step's end, hashed, and no
    launch of their own; two runs' fingerprints name the step where they
    first part. A step ends where an optimizer's ``step()`` returns, or
    where the program calls :func:`tritontui.step` (whichever ends one
    first counts the steps). ``from_step`` (``TRITONTUI_FROM_STEP``):
    record fingerprints until that step (counted from 0) begins, then
    everything. ``to_step`` (``TRITONTUI_TO_STEP``): stop recording when
    that step ends.
    Flags in the environment are ``1``, ``true``, ``yes`` or ``0``,
    ``false``, ``no``; a value an option does not take raises ValueError."""
    from . import _options, _session, _spawned_ranks

    options = _options.resolve(
        {
            "hash": hash,
            "aten": aten,
            "kernels": kernels,
            "stats": stats,
            "samples": samples,
            "rows": rows,
            "break_at": break_at,
            "capture": capture,
            "capture_budget": capture_budget,
            "hash_fn": hash_fn,
            "cuda_graphs": cuda_graphs,
            "fingerprint": fingerprint,
            "from_step": from_step,
            "to_step": to_step,
        }
    )
    _session.start(path, options)
    _spawned_ranks.install()


def stop() -> None:
    """Stops recording and completes the trace."""
    from . import _session

    _session.stop()


@contextlib.contextmanager
def record(path: str | os.PathLike[str], **options: Any) -> Iterator[None]:
    """Records the launches made inside the ``with`` block; see
    :func:`start`. A block left by an exception ends the trace saying
    what it raised."""
    from . import _session

    start(path, **options)
    try:
        yield
    except BaseException as error:
        _session.stop(_session.raised_reason(error, "stopped"))
        raise
    stop()

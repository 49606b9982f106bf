"""The process environment: every variable this package reads or sets,
and the one module that touches ``os.environ`` (besides
``tritontui_autorecord.pth``, which must decide before importing anything
whether to import ``_autostart``).

* Recording options (``TRITONTUI_HASH`` and the rest, named in the trace
  crate's options table) are resolved by ``_options.resolve`` from
  ``variables()``.
* Hand-overs between processes: ``TRITONTUI_RECORD`` (``tritontui record``
  to the program it runs), ``TRITONTUI_SPAWNED_RANKS`` (a recording
  launcher to the ranks ``torch.multiprocessing.spawn`` starts),
  ``TRITONTUI_TRACE``, ``TRITONTUI_BREAK`` and ``TRITONTUI_BREAK_ID`` (a
  recording to the compile workers that pause with it).
* Switches that turn one mechanism of the recorder off, for the tests and
  benchmarks that compare it with the plain path: ``TRITONTUI_GPU_HASH=0``
  (CUDA tensors hashed on the host), ``TRITONTUI_ATEN_OBSERVER=0`` (aten
  ops through the Python dispatch mode, not the native observer),
  ``TRITONTUI_ATEN_NATIVE=0`` (the observer makes every op's call Python
  objects instead of reading its values natively),
  ``TRITONTUI_EXTERN_HOOK=0`` (extern kernels through the dispatch mode),
  ``TRITONTUI_DEFER_HASHES=0`` (device
  hashes launch by launch, a graph call's inputs hashed before it),
  ``TRITONTUI_HASH_EVERY_INPUT=1`` (no hash taken from the data flow); and
  ``TRITONTUI_ALLOW_ATTACH=1``, which lets any process trace a paused one.
* ``TRITONTUI_BIN``: the ``tritontui`` command ``check_determinism`` runs.
* torchrun's placement of this process (``RANK``, ``WORLD_SIZE``,
  ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``,
  ``TORCHELASTIC_RUN_ID``).
* The variables that change kernels, recorded as the program's settings
  (``_settings``), read through ``variables()``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

RECORD = "TRITONTUI_RECORD"
SPAWNED_RANKS = "TRITONTUI_SPAWNED_RANKS"
TRACE = "TRITONTUI_TRACE"
BREAK = "TRITONTUI_BREAK"
BREAK_ID = "TRITONTUI_BREAK_ID"


def variables() -> Mapping[str, str]:
    """The process's environment as it is now."""
    return os.environ


def get(name: str) -> str:
    """A hand-over variable's value ("" when unset)."""
    return os.environ.get(name, "")


def hand_over(name: str, value: str) -> None:
    """Sets a hand-over variable, for the processes this one starts."""
    os.environ[name] = value


def take(name: str) -> str:
    """A hand-over variable's value ("" when unset), removed from the
    environment so that no process this one starts finds it."""
    return os.environ.pop(name, "")


def gpu_hashing_off() -> bool:
    """``TRITONTUI_GPU_HASH=0``: CUDA tensors are hashed on the host."""
    return os.environ.get("TRITONTUI_GPU_HASH") == "0"


def aten_observer_off() -> bool:
    """``TRITONTUI_ATEN_OBSERVER=0``: aten ops are recorded through the
    Python dispatch mode, not the native observer."""
    return os.environ.get("TRITONTUI_ATEN_OBSERVER") == "0"


def aten_native_off() -> bool:
    """``TRITONTUI_ATEN_NATIVE=0``: the native observer makes every aten
    op's call Python objects, as a dispatch mode sees it, instead of
    reading the values of those it can natively."""
    return os.environ.get("TRITONTUI_ATEN_NATIVE") == "0"


def extern_hook_off() -> bool:
    """``TRITONTUI_EXTERN_HOOK=0``: Inductor's extern kernels are recorded
    through the dispatch mode, not their native proxies."""
    return os.environ.get("TRITONTUI_EXTERN_HOOK") == "0"


def deferred_hashes_off() -> bool:
    """``TRITONTUI_DEFER_HASHES=0``: device hashes are enqueued launch by
    launch, never gathered across launches, and a graph call's input
    hashes run before its launches, never beside them."""
    return os.environ.get("TRITONTUI_DEFER_HASHES") == "0"


def every_input_hashed() -> bool:
    """``TRITONTUI_HASH_EVERY_INPUT=1``: no launch takes its hashes before
    from the data flow."""
    return os.environ.get("TRITONTUI_HASH_EVERY_INPUT") == "1"


def any_tracer_allowed() -> bool:
    """``TRITONTUI_ALLOW_ATTACH=1``: any process may trace this one while it
    is paused (not only its ancestors)."""
    return os.environ.get("TRITONTUI_ALLOW_ATTACH") == "1"


def tritontui_binary() -> str:
    """``TRITONTUI_BIN``: the ``tritontui`` command to run ("" for this
    package's own)."""
    return os.environ.get("TRITONTUI_BIN", "")


def local_rank() -> int | None:
    """``LOCAL_RANK``, when set to a number."""
    local = os.environ.get("LOCAL_RANK", "")
    return int(local) if local.isdigit() else None


def torchrun_placement() -> dict[str, Any] | None:
    """This process's place in a run torchrun launched, as its environment
    says; None outside one (no ``RANK`` or ``WORLD_SIZE``)."""
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        return None

    def number(name: str) -> int:
        try:
            return int(os.environ.get(name, "0"))
        except ValueError:
            return 0

    return {
        "rank": number("RANK"),
        "world_size": number("WORLD_SIZE"),
        "local_rank": number("LOCAL_RANK"),
        "local_world_size": number("LOCAL_WORLD_SIZE"),
        "node_rank": number("GROUP_RANK"),
        "run_id": os.environ.get("TORCHELASTIC_RUN_ID", ""),
    }

"""AOTInductor models: a package loaded with ``aoti_load_package`` (or a
model library run through its container runner) launches its kernels
from C++ past every hook. While recording, each model's first call
writes a ``compile`` record (``event: graph``, ``info: {unrecorded:
"aot_inductor"}``) and warns once, so that a comparison of the trace
says what it did not see instead of taking the runs as equal."""

from __future__ import annotations

import functools
import hashlib
from typing import Any

from .. import _active
from . import graph_inputs, methods

# (class, method name) -> the method replaced while recording.
_ORIGINALS: dict[tuple[Any, str], Any] = {}


def _entries() -> list[tuple[Any, str]]:
    import torch

    aoti = getattr(torch._C, "_aoti", None)
    if aoti is None:
        return []
    entries = [(aoti.AOTIModelPackageLoader, "boxed_run"), (aoti.AOTIModelPackageLoader, "run")]
    for runner in ("AOTIModelContainerRunnerCpu", "AOTIModelContainerRunnerCuda"):
        if hasattr(aoti, runner):
            entries.append((getattr(aoti, runner), "run"))
    return entries


def install() -> None:
    for owner, name in _entries():
        if (owner, name) not in _ORIGINALS and hasattr(owner, name):
            original = getattr(owner, name)
            _ORIGINALS[(owner, name)] = original
            setattr(owner, name, methods.method(_said_unrecorded(original)))


def uninstall() -> None:
    for (owner, name), original in list(_ORIGINALS.items()):
        setattr(owner, name, original)
        del _ORIGINALS[(owner, name)]


def model_name(model: Any) -> str:
    """``AOTInductor model 1a2b3c4d``: named by its call spec, the same in
    every process that loads the same package."""
    try:
        spec = repr(model.get_call_spec())
    except Exception:
        return "AOTInductor model"
    return f"AOTInductor model {hashlib.sha256(spec.encode()).hexdigest()[:8]}"


def _said_unrecorded(original: Any) -> Any:
    @functools.wraps(original)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        session = _active.active()
        if session is not None:
            try:
                with _active.dynamo_off():
                    graph = model_name(self)
                    if graph not in session.unrecorded_graphs:
                        graph_inputs.say_unrecorded(session, graph, "aot_inductor")
            except Exception as e:
                session.fail(e)
        return original(self, *args, **kwargs)

    return run

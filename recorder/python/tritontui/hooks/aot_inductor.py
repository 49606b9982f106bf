"""AOTInductor models: a package loaded with ``aoti_load_package`` (or a
model library run through its container runner) launches its kernels
from C++. One compiled with the recorder's C++-wrapper hooks (compiled
while recording, or by :func:`tritontui.compile_package`) calls them
around each launch (see the cpp_wrapper hooks); each call of the model
records its inputs as a graph call's. A model whose call reached no hook
was compiled without them: its first such call writes a ``compile``
record (``event: graph``, ``info: {unrecorded: "aot_inductor"}``) and
warns once, so that a comparison of the trace says what it did not see
instead of taking the runs as equal."""

from __future__ import annotations

import functools
import hashlib
from typing import Any

from .. import _active
from . import cpp_wrapper, graph_inputs, methods

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
        if session is None:
            return original(self, *args, **kwargs)
        graph = None
        try:
            with _active.dynamo_off():
                graph = model_name(self)
                inputs = args[0] if args and isinstance(args[0], (list, tuple)) else []
                names = [f"input{i}" for i in range(len(inputs))]
                session.sample_settings()
                session.graph_inputs(graph, names, list(inputs), all_recorded=False)
        except Exception as e:
            session.fail(e)
        calls = cpp_wrapper.calls()
        try:
            return original(self, *args, **kwargs)
        finally:
            if graph is not None:
                try:
                    with _active.dynamo_off():
                        unbound = not cpp_wrapper.call_ended(calls)
                        if unbound and graph not in session.unrecorded_graphs:
                            graph_inputs.say_unrecorded(session, graph, "aot_inductor")
                        session.graph_call_end()
                except Exception as e:
                    session.fail(e)

    return run

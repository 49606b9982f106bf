"""Dynamo's and Inductor's structured compile events
(``torch._logging.trace_structured``, the stream tlparse reads) recorded
as ``compile`` records: a frame's compilation starting (its compile id
and the user function), the guards it installed (Dynamo's guard tree), a
recompilation with the guards that failed, a graph break with its reason
and user line, Inductor's FX graph cache hit, miss or bypass, with the
Inductor config entries not at their defaults while that graph compiled
(``inductor.NAME``, as the header names them). A logging handler on the
``torch.__trace`` logger while recording; it reads what torch hands it
and changes nothing that gets compiled (with a handler installed torch
builds its structured payloads, which costs compile time only)."""

from __future__ import annotations

import json
import logging
import os
import re
from typing import Any

from .. import _active, _settings
from . import kernel_sites

_HANDLER: logging.Handler | None = None
# A compilation's guard tree is kept up to this many characters (one
# line per guard; a model of thousands of parameters has thousands).
_GUARDS_KEPT = 256 * 1024


class _CompileEvents(logging.Handler):
    """Turns the structured events it is handed into trace records."""

    def emit(self, record: logging.LogRecord) -> None:
        session = _active.active()
        if session is None:
            return
        try:
            event = _event(getattr(record, "metadata", None), getattr(record, "payload", None))
            if event is not None:
                kind, info = event
                if kind == "fx_graph_cache":
                    kernel_sites.named(info["key"], info["state"])
                session.file.compile(kind, info.pop("name", ""), info)
        except Exception as e:
            session.fail(e)


def _event(metadata: Any, payload: Any) -> tuple[str, dict[str, Any]] | None:
    """The event a structured log record holds, as (kind, info), or None
    for those not kept."""
    if not isinstance(metadata, dict):
        return None
    ids = {
        key: metadata[key]
        for key in ("frame_id", "frame_compile_id", "attempt")
        if isinstance(metadata.get(key), int)
    }
    compile_id = f"{ids.get('frame_id', '?')}/{ids.get('frame_compile_id', '?')}"
    if "dynamo_start" in metadata:
        stack = metadata["dynamo_start"].get("stack") or [{}]
        # The frame compiled is the last; where the user's code is, the
        # last frame outside torch (a module's compiled frame is torch's).
        located = [(f, _filename(f.get("filename"))) for f in stack]
        user = [(f, name) for f, name in located if not name.startswith(_torch_dir())]
        frame, filename = (user or located)[-1]
        return "dynamo_start", {
            "name": str(stack[-1].get("name", "")),
            "compile_id": compile_id,
            "location": f"{filename}:{frame.get('line', '?')}",
            **ids,
        }
    if "dynamo_cpp_guards_str" in metadata and isinstance(payload, str):
        # Dynamo's guard tree, then a line of its latency (which varies).
        tree = "\n".join(
            line for line in payload.strip().splitlines() if not line.startswith("Guard latency")
        )
        if len(tree) > _GUARDS_KEPT:
            tree = f"{tree[:_GUARDS_KEPT]}\n... ({len(tree) - _GUARDS_KEPT} more characters)"
        return "guards", {"name": compile_id, "compile_id": compile_id, "guards": tree, **ids}
    artifact = metadata.get("artifact")
    if not isinstance(artifact, dict) or not isinstance(payload, str):
        return None
    if artifact.get("name") == "recompile_reasons":
        # One reason comes as its text, several as a JSON list.
        try:
            reasons = json.loads(payload)
        except ValueError:
            reasons = payload
        reasons = reasons if isinstance(reasons, list) else [reasons]
        return "recompile", {
            "name": compile_id,
            "compile_id": compile_id,
            "reasons": "; ".join(str(r).strip() for r in reasons),
            **ids,
        }
    name = str(artifact.get("name", ""))
    if name.startswith("fx_graph_cache_"):
        # Inductor says this inside the graph's compile, with the options
        # the compile was given patched into its config: the entries not at
        # their defaults are those that made this graph's kernels.
        cache = json.loads(payload)
        return "fx_graph_cache", {
            "name": compile_id,
            "compile_id": compile_id,
            "state": name.removeprefix("fx_graph_cache_"),
            "key": str(cache.get("key", "")),
            **({"bypass_reason": str(r)} if (r := cache.get("cache_bypass_reason")) else {}),
            **ids,
            **_settings.non_defaults("inductor", "torch._inductor.config"),
        }
    if artifact.get("name") == "dynamo_graph_break_reason":
        where, reason = graph_break(payload)
        return "graph_break", {
            "name": compile_id,
            "compile_id": compile_id,
            "location": where,
            "reason": reason,
            **ids,
        }
    return None


def graph_break(payload: str) -> tuple[str, str]:
    """Where a graph broke and why, from Dynamo's `dynamo_graph_break_reason`
    artifact: ``Graph break in user code at FILE:LINE`` then ``Graph Break
    Reason: ...``, whose line may only lead into the reason on the lines
    after it (``Graph break encountered:``, then what and its
    ``Explanation:``); or ``WON'T CONVERT FN FILE line N`` and a stack
    trace, when Dynamo gave up on the whole frame and runs it eagerly, the
    exception last."""
    lines = payload.splitlines()
    first = lines[0] if lines else ""
    frame = re.fullmatch(r"WON'T CONVERT (\S+) (.+) line (\d+)", first)
    if frame:
        raised = [line for line in lines if re.match(r"[A-Za-z_][\w.]*: ", line)]
        why = f": {raised[-1]}" if raised else ""
        return f"{frame[2]}:{frame[3]}", f"`{frame[1]}` runs eagerly{why}"
    where = first.removeprefix("Graph break in user code at ")
    at = next((i for i, line in enumerate(lines) if "Reason:" in line), None)
    if at is None:
        return where, ""
    reason = lines[at].removeprefix("Graph Break Reason: ")
    if reason.endswith(":"):
        after = [line.strip() for line in lines[at + 1 :] if line.strip()]
        what = after[0] if after else ""
        explained = next(
            (
                line.removeprefix("Explanation:").strip()
                for line in after
                if line.startswith("Explanation:")
            ),
            "",
        )
        reason = " ".join(part for part in (reason, what, explained and f"({explained})") if part)
    return where, reason


def _torch_dir() -> str:
    import torch

    return os.path.dirname(torch.__file__) + os.sep


def _filename(index: Any) -> str:
    """A file name torch interned (its structured logs give the index)."""
    from torch._logging import structured

    if isinstance(index, str):
        return index
    for name, i in structured.INTERN_TABLE.items():
        if i == index:
            return name
    return "?"


def install() -> None:
    global _HANDLER
    if _HANDLER is not None:
        return
    _HANDLER = _CompileEvents(level=logging.DEBUG)
    trace_log = logging.getLogger("torch.__trace")
    trace_log.setLevel(logging.DEBUG)
    trace_log.addHandler(_HANDLER)


def uninstall() -> None:
    global _HANDLER
    if _HANDLER is None:
        return
    logging.getLogger("torch.__trace").removeHandler(_HANDLER)
    _HANDLER = None

"""Dynamo's compile events of any Python process started with this folder
on PYTHONPATH and ``DYNAMO_EVENTS`` set: a test's witness of what torch
compiled, taken the same way in a recorded and an unrecorded run.

At exit the process writes ``DYNAMO_EVENTS`` (``{rank}`` becomes torchrun's
``RANK``, or ``launcher`` outside a rank) as JSON: the frames Dynamo
compiled, each compilation's metrics (graph sizes, guard counts, why it
failed or restarted), the graph breaks with their reasons, the
recompilations with the guards that failed, every guard tree installed,
and Dynamo's counters. Addresses and object ids, which differ between
any two processes, are replaced by ``N``. It reads the structured events
torch logs for tlparse (``torch.__trace``) and imports nothing of
tritontui, so it sees the recorder as a user's program would."""

from __future__ import annotations

import atexit
import json
import logging
import os
import re
import sys
from typing import Any

# An address (0x7f...) or an id (type ids, object ids): they differ
# between processes.
_IDENTITY = re.compile(r"0x[0-9a-fA-F]+|\b\d{7,}\b")
# A DICT_VERSION guard's number is the dict's version tag when the frame
# compiled, a snapshot of a counter every dict mutation in the process
# advances (PEP 509): any Python run before the compile moves it, while
# the guard (the dict unchanged since) is the same.
_DICT_VERSION = re.compile(r"(___dict_version\(.*?\) == )\d+")
# A set a guard compares with, printed in the set's iteration order, which
# hashing by address makes differ between processes.
_FROZENSET = re.compile(r"frozenset\(\{([^{}]*)\}\)")
# The compilation metrics that say what was compiled (times and cache
# states say how long it took and where it came from).
_METRICS = (
    "co_name",
    "co_firstlineno",
    "graph_op_count",
    "graph_node_count",
    "graph_input_count",
    "guard_count",
    "shape_env_guard_count",
    "fail_type",
    "fail_reason",
    "restart_reasons",
    "has_guarded_code",
    "non_compliant_ops",
    "compliant_custom_ops",
)
# Dynamo's counters that count what was compiled.
_COUNTERS = ("stats", "frames", "graph_break", "unimplemented", "recompiles")

_EVENTS: list[dict[str, Any]] = []


def _plain(value: Any) -> Any:
    """``value`` with addresses and ids replaced, sets sorted."""
    if isinstance(value, str):
        plain = _IDENTITY.sub("N", _DICT_VERSION.sub(r"\1N", value))
        return _FROZENSET.sub(_sorted_set, plain)
    if isinstance(value, (set, frozenset, list, tuple)):
        items = [_plain(v) for v in value]
        return sorted(items, key=str) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, dict):
        return {_plain(str(k)): _plain(v) for k, v in value.items()}
    return value


def _sorted_set(match: re.Match[str]) -> str:
    """A printed frozenset with its items in sorted order."""
    return "frozenset({" + ", ".join(sorted(match.group(1).split(", "))) + "})"


def _event(metadata: dict[str, Any], payload: Any) -> dict[str, Any] | None:
    """What one structured event says about what was compiled, or None."""
    compile_id = f"{metadata.get('frame_id')}/{metadata.get('frame_compile_id')}"
    if "dynamo_start" in metadata:
        frame = (metadata["dynamo_start"].get("stack") or [{}])[-1]
        return {
            "frame": compile_id,
            "name": frame.get("name"),
            "line": frame.get("line"),
        }
    if "compilation_metrics" in metadata:
        metrics = metadata["compilation_metrics"]
        return {"metrics": compile_id, **{k: _plain(metrics.get(k)) for k in _METRICS}}
    if "dynamo_cpp_guards_str" in metadata and isinstance(payload, str):
        lines = [line for line in payload.splitlines() if not line.startswith("Guard latency")]
        return {"guards": compile_id, "tree": _plain("\n".join(lines).strip())}
    artifact = metadata.get("artifact")
    if isinstance(artifact, dict) and isinstance(payload, str):
        name = artifact.get("name")
        if name == "dynamo_graph_break_reason":
            lines = payload.splitlines()
            reason = [line for line in lines[:3] if line.strip()]
            return {"graph_break": compile_id, "reason": _plain(reason)}
        if name == "recompile_reasons":
            return {"recompile": compile_id, "reasons": _plain(payload.strip())}
    return None


class _Witness(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None)
        if isinstance(metadata, dict):
            event = _event(metadata, getattr(record, "payload", None))
            if event is not None:
                _EVENTS.append(event)


def _write() -> None:
    path = os.environ["DYNAMO_EVENTS"].format(rank=os.environ.get("RANK", "launcher"))
    utils = sys.modules.get("torch._dynamo.utils")
    counters = {}
    if utils is not None:
        counters = {k: _plain(dict(utils.counters[k])) for k in _COUNTERS if utils.counters[k]}
    with open(path, "w") as f:
        json.dump({"events": _EVENTS, "counters": counters}, f, indent=1, sort_keys=True)


if os.environ.get("DYNAMO_EVENTS"):
    _log = logging.getLogger("torch.__trace")
    _log.setLevel(logging.DEBUG)
    _log.addHandler(_Witness(level=logging.DEBUG))
    atexit.register(_write)

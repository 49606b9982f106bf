"""The ``nn.Module`` path of the code running now, read from the Python
frames (no module hook, which Dynamo would trace): each
``Module._call_impl`` frame on the stack is one module's call; the
outermost is the root, and each inner module is named by the attribute
path its parent holds it under (``layers.1.mlp``; the empty string for
the root itself). A module called again within one call of the root is
named with its call as Dynamo counts them (``layers.1.mlp@1``: its second
call). What two programs' points are named by where they were computed
eagerly."""

from __future__ import annotations

import itertools
import sys
import threading
from typing import Any

import torch

_CALL_IMPL = torch.nn.Module._call_impl.__code__
# The code of the recorder's wrappers around a compiled graph's call: an op
# below one runs inside compiled code (an extern kernel), whose module the
# kernel's compile names, not the frames (which show the compiled root's).
COMPILED_CALLS: set[Any] = set()
# Each parent's children by identity, named, computed once per parent
# (a model's structure is fixed while it trains; a new child is looked up
# again).
_CHILDREN: dict[int, dict[int, str]] = {}
# Per thread: the module calls open at its last op, outermost first, each
# (frame, path, name), and how often each path was called within the
# outermost one's call. The frames are held only until the thread's next
# op (or :func:`forget`), so that a frame object's identity says whether
# a module is still in the same call.
_CALLS = threading.local()


def module_path() -> str | None:
    """The path of the innermost module whose call is running, from the
    outermost one, with its call within the outermost one's where not the
    first (``@1``); None outside any module, and inside a compiled graph."""
    chain: list[tuple[Any, torch.nn.Module]] = []
    # Called from the native hook, possibly on a thread with no Python
    # frame above this one (the autograd engine's device threads).
    frame = sys._getframe(0).f_back
    while frame is not None:
        if frame.f_code in COMPILED_CALLS:
            return None
        if frame.f_code is _CALL_IMPL:
            module = frame.f_locals.get("self")
            if isinstance(module, torch.nn.Module):
                chain.append((frame, module))
        frame = frame.f_back
    if not chain:
        return None
    chain.reverse()
    return _named_calls(chain)[-1][2]


def _named_calls(chain: list[tuple[Any, torch.nn.Module]]) -> list[tuple[Any, str, str]]:
    """Each module call of ``chain`` (outermost first) as (frame, path,
    name): a call open at this thread's last op keeps its name, a new one
    is counted."""
    previous: list[tuple[Any, str, str]] = getattr(_CALLS, "open", [])
    if not previous or previous[0][0] is not chain[0][0]:
        previous, _CALLS.counts = [], {}
    counts: dict[str, int] = _CALLS.counts
    named: list[tuple[Any, str, str]] = [(chain[0][0], "", "")]
    still_open = bool(previous)
    for depth, ((_, parent), (frame, child)) in enumerate(itertools.pairwise(chain), start=1):
        still_open = still_open and len(previous) > depth and previous[depth][0] is frame
        if still_open:
            named.append(previous[depth])
            continue
        name = _child_name(parent, child)
        _, parent_path, parent_name = named[-1]
        if not name:  # not its parent's child: named as the parent
            named.append((frame, parent_path, parent_name))
            continue
        path = f"{parent_path}.{name}" if parent_path else name
        calls = counts.get(path, 0)
        counts[path] = calls + 1
        named.append((frame, path, f"{path}@{calls}" if calls else path))
    _CALLS.open = named
    return named


def forget() -> None:
    """Lets go of this thread's open module calls (recording stopped)."""
    _CALLS.__dict__.clear()


def _child_name(parent: torch.nn.Module, child: torch.nn.Module) -> str:
    """The path under which ``parent`` holds ``child`` (empty when it does
    not: a module called from another's code without being its child,
    such as a compiled module's original)."""
    children = _CHILDREN.get(id(parent))
    if children is None or id(child) not in children:
        children = {id(m): name for name, m in parent.named_modules() if name}
        _CHILDREN[id(parent)] = children
    return children.get(id(child), "")

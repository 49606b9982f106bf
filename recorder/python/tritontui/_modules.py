"""The ``nn.Module`` path of the code running now, read from the Python
frames (no module hook, which Dynamo would trace): each
``Module._call_impl`` frame on the stack is one module's call; the
outermost is the root, and each inner module is named by the attribute
path its parent holds it under (``layers.1.mlp``; the empty string for
the root itself). What two programs' points are named by where they
were computed eagerly."""

from __future__ import annotations

import itertools
import sys
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


def module_path() -> str | None:
    """The path of the innermost module whose call is running, from the
    outermost one; None outside any module, and inside a compiled graph."""
    chain: list[Any] = []
    # Called from the native hook, possibly on a thread with no Python
    # frame above this one (the autograd engine's device threads).
    frame = sys._getframe(0).f_back
    while frame is not None:
        if frame.f_code in COMPILED_CALLS:
            return None
        if frame.f_code is _CALL_IMPL:
            module = frame.f_locals.get("self")
            if isinstance(module, torch.nn.Module):
                chain.append(module)
        frame = frame.f_back
    if not chain:
        return None
    chain.reverse()
    names = (_child_name(parent, child) for parent, child in itertools.pairwise(chain))
    return ".".join(name for name in names if name)


def _child_name(parent: torch.nn.Module, child: torch.nn.Module) -> str:
    """The path under which ``parent`` holds ``child`` (empty when it does
    not: a module called from another's code without being its child,
    such as a compiled module's original)."""
    children = _CHILDREN.get(id(parent))
    if children is None or id(child) not in children:
        children = {id(m): name for name, m in parent.named_modules() if name}
        _CHILDREN[id(parent)] = children
    return children.get(id(child), "")

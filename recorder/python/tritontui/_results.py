"""The tensors Python can reach: at stop, the program's results (parameters
and their gradients, optimizer state, buffers, outputs the program holds),
so that tritontui can tell a difference that reaches them from one
absorbed on the way; at start, what the program already held, so that a
result still holding those bytes is not taken for one of the recorded
region's (docs/trace-format.md, ``results`` and ``held``)."""

from __future__ import annotations

import gc
import itertools
import operator
import sys
import weakref
from typing import Any, NamedTuple

import torch

from . import _native, _tensors


class Live(NamedTuple):
    """One distinct tensor view alive now, and what the program calls it
    (``""`` where nothing names it)."""

    tensor: torch.Tensor
    name: str


def live_tensors(named: bool = True) -> list[Live]:
    """Each distinct live tensor view once, with leaf tensors' gradients
    (which exist in Python only once asked for), the tensors behind live
    numpy arrays, and what a tensor without storage of its own wraps
    (functorch's batched and grad-tracking tensors); when ``named``, named
    after the modules and optimizers that hold them (:func:`names`)."""
    seen: set[tuple[object, ...]] = set()
    tensors: list[torch.Tensor] = []
    modules: list[torch.nn.Module] = []
    optimizers: list[torch.optim.Optimizer] = []

    def add(t: torch.Tensor) -> None:
        t = _tensors.with_storage(t)
        if t is None or not _tensors.is_hashable(t) or t.numel() == 0:
            return
        key = (t.device, t.data_ptr(), t.dtype, tuple(t.shape), tuple(t.stride()))
        if key not in seen:
            seen.add(key)
            tensors.append(t)

    ndarray = getattr(sys.modules.get("numpy"), "ndarray", None)
    # What each type of object is, asked of each type once, and the
    # objects of the types that matter picked out without a Python frame
    # per object (a process that imported torch holds about 400,000).
    # isinstance() on an arbitrary object could run its code (a dead weak
    # proxy raises, a deprecated alias warns); the type is safe to ask.
    objects = gc.get_objects()
    kinds = _Kinds(ndarray)
    for obj in itertools.compress(objects, map(kinds.__getitem__, map(type, objects))):
        kind = kinds[type(obj)]
        if kind == "tensor":
            add(obj)
            if obj.is_leaf and obj.requires_grad and obj.grad is not None:
                add(obj.grad)
        elif kind == "array":
            # `Tensor.numpy()` shares the tensor's memory: its base.
            base = obj.base
            if type(base) is torch.Tensor:
                add(base)
        elif kind == "module":
            modules.append(obj)
        else:
            optimizers.append(obj)
    given = names(modules, optimizers) if named else {}
    return [Live(t, given.get(id(t), "")) for t in tensors]


class _Kinds(dict):
    """What an object of each type is to :func:`live_tensors`, worked out
    the first time a type is looked up: ``tensor`` (exactly a tensor or a
    parameter: subclasses wrap others), ``array`` (a numpy array),
    ``module``, ``optimizer``, or ``""``."""

    def __init__(self, ndarray: type | None) -> None:
        super().__init__()
        self.ndarray = ndarray

    def __missing__(self, kind: type) -> str:
        if kind is torch.Tensor or kind is torch.nn.Parameter:
            what = "tensor"
        elif kind is self.ndarray:
            what = "array"
        elif issubclass(kind, torch.nn.Module):
            what = "module"
        elif issubclass(kind, torch.optim.Optimizer):
            what = "optimizer"
        else:
            what = ""
        self[kind] = what
        return what


def names(
    modules: list[torch.nn.Module], optimizers: list[torch.optim.Optimizer]
) -> dict[int, str]:
    """What the program calls each tensor its modules and optimizers hold,
    by ``id``: a parameter's or buffer's path from its outermost module
    (``layers.0.weight``; the ``_orig_mod`` of ``torch.compile``'s wrapper
    left out, so a compiled and an eager model name theirs alike), its
    gradient (``layers.0.weight.grad``) and an optimizer's state for it
    (``layers.0.weight.exp_avg``). A name two tensors would share (two
    models of one class) is given to neither: a name pairs a result with
    its counterpart only where it is unique."""
    children = {id(c) for m in modules for c in m._modules.values() if c is not None}
    given: dict[int, str] = {}
    holder: dict[str, int] = {}
    shared: set[str] = set()

    def give(t: object, name: str) -> None:
        if type(t) is not torch.Tensor and type(t) is not torch.nn.Parameter:
            return
        if id(t) in given:
            return  # a tied weight keeps its first name
        other = holder.setdefault(name, id(t))
        if other != id(t):
            shared.add(name)
        given[id(t)] = name

    for root in modules:
        # Only outermost modules name; compiler-made graph modules name
        # nothing (what they hold is the program's modules' own), nor do
        # the modules under them.
        if id(root) in children or isinstance(root, torch.fx.GraphModule):
            continue
        for path, module in root.named_modules():
            prefix = ".".join(p for p in path.split(".") if p and p != "_orig_mod")
            prefix = f"{prefix}." if prefix else ""
            for key, p in module._parameters.items():
                if p is None:
                    continue
                give(p, prefix + key)
                if p.grad is not None:
                    give(p.grad, f"{prefix}{key}.grad")
            for key, b in module._buffers.items():
                if b is not None:
                    give(b, prefix + key)
    for optimizer in optimizers:
        for p, state in optimizer.state.items():
            name = given.get(id(p))
            if name is None or not isinstance(state, dict):
                continue
            for key, value in state.items():
                give(value, f"{name}.{key}")
    return {i: name for i, name in given.items() if name not in shared}


def by_device(live: list[Live]) -> dict[int, list[Live]]:
    """The tensors grouped by device ordinal (-1 for the CPU)."""
    groups: dict[int, list[Live]] = {}
    for entry in live:
        device = entry.tensor.device
        groups.setdefault(-1 if device.type == "cpu" else device.index, []).append(entry)
    return groups


class TrainingState:
    """What a program trains: its optimizers (or, without one, its
    outermost modules), found once among Python's objects and held
    weakly; at each step's end their tensors, named, in a fixed order
    (each optimizer's parameters group by group, each followed by its
    state in key order; a module's parameters, then its buffers)."""

    def __init__(self) -> None:
        self._optimizers: list[weakref.ref] = []
        self._modules: list[weakref.ref] = []
        self._found = False
        # The last step's answer, by the objects it was found among: named
        # again only when they change (a new optimizer state, say).
        self._last: tuple[list[Any], list[Live]] = ([], [])

    def tensors(self) -> list[Live]:
        """The tensors held now, each view once."""
        optimizers = [o for o in (ref() for ref in self._optimizers) if o is not None]
        modules = [m for m in (ref() for ref in self._modules) if m is not None]
        if not self._found or (not optimizers and not modules):
            modules, optimizers = _holders()
            self._modules = [weakref.ref(m) for m in modules]
            self._optimizers = [weakref.ref(o) for o in optimizers]
            self._found = True
        if optimizers:
            # Natively: this walk runs at every step's end, from a cold cache.
            ordered = _native.optimizer_state(optimizers, self._last[0])
            if ordered is None:
                return self._last[1]
        else:
            ordered = []
            children = {id(c) for m in modules for c in m._modules.values() if c is not None}
            for root in modules:
                if id(root) in children or isinstance(root, torch.fx.GraphModule):
                    continue
                ordered.extend(p for _, p in root.named_parameters())
                ordered.extend(b for _, b in root.named_buffers())
            if len(ordered) == len(self._last[0]) and all(
                map(operator.is_, ordered, self._last[0])
            ):
                return self._last[1]
        given = names(modules, optimizers)
        seen: set[int] = set()
        live = []
        for t in ordered:
            if not isinstance(t, torch.Tensor) or id(t) in seen:
                continue
            seen.add(id(t))
            held = _tensors.with_storage(t)
            if held is not None and _tensors.is_hashable(held) and held.numel() > 0:
                live.append(Live(held, given.get(id(t), "")))
        self._last = (ordered, live)
        return live


def _holders() -> tuple[list[torch.nn.Module], list[torch.optim.Optimizer]]:
    """The modules and optimizers alive now, in the garbage collector's
    order (picked out by type, as :func:`live_tensors` does)."""
    objects = gc.get_objects()
    kinds = _Kinds(None)
    modules, optimizers = [], []
    for obj in itertools.compress(objects, map(kinds.__getitem__, map(type, objects))):
        kind = kinds[type(obj)]
        if kind == "module":
            modules.append(obj)
        elif kind == "optimizer":
            optimizers.append(obj)
    return modules, optimizers

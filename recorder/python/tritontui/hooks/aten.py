"""aten ops in the recorded region: eager ops and Inductor's extern
kernels (``extern_kernels.mm`` and the like), through a
``TorchDispatchMode``. With them, a divergent input can be traced to the
op that wrote it even when that op is not a compiled kernel.

Allocations (``empty`` and friends) are recorded without hashes and marked
``allocates``, so that reading memory nobody wrote since is told apart from
reading a value a launch produced."""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .. import _active, _tensors
from .._unwritten import unwritten_outputs

_ALLOCATIONS = {
    "empty",
    "empty_strided",
    "empty_like",
    "new_empty",
    "new_empty_strided",
    "empty_permuted",
}

# Ops that only describe tensors or make views: nothing is computed.
_SKIP = {
    "detach",
    "alias",
    "lift_fresh",
    "is_same_size",
    "sym_size",
    "sym_stride",
}

# Return types that hand a value to the host (`.item()` is
# `_local_scalar_dense`, `torch.equal` returns a bool).
_HOST_VALUE_TYPES = {
    "IntType",
    "FloatType",
    "BoolType",
    "NumberType",
    "ComplexType",
    "SymIntType",
    "SymFloatType",
    "SymBoolType",
}
# Whether each op hands a value to the host, by op.
_HOST_READS: dict[Any, bool] = {}


# The names of each op's returns ("" where unnamed), by op: reading them
# from the schema costs microseconds per op.
_RETURN_NAMES: dict[Any, tuple[str, ...]] = {}


def _return_names(func: Any) -> tuple[str, ...]:
    found = _RETURN_NAMES.get(func)
    if found is None:
        found = _RETURN_NAMES[func] = tuple(r.name for r in func._schema.returns)
    return found


def reads_to_host(func: Any) -> bool:
    """Whether the op returns a host value (a number or a bool): what it
    read is then part of the program's results."""
    found = _HOST_READS.get(func)
    if found is None:
        found = _HOST_READS[func] = any(
            r.type.kind() in _HOST_VALUE_TYPES for r in func._schema.returns
        )
    return found


class AtenRecorder(TorchDispatchMode):
    """Records each aten op with its tensor arguments hashed before and
    after, into the session that installed it only: a mode left on a
    thread's stack records nothing into a later session."""

    def __init__(self, session: Any) -> None:
        super().__init__()
        self.session = session

    @classmethod
    def ignore_compile_internals(cls) -> bool:
        # torch.compile traces and compiles as if the mode were not there.
        return True

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        session = _active.active()
        base = func._schema.name.split("::")[-1]
        if (
            session is None
            or session is not self.session
            or func.is_view
            or base in _SKIP
            or _active.in_launch()
            or not session.wants(f"aten::{base}")
        ):
            return func(*args, **kwargs)
        try:
            inputs = _flatten(func, args, kwargs)
            allocates = base in _ALLOCATIONS
            described = session.describe(
                [value for _, _, value in inputs],
                _tensors.access_codes([access for _, access, _ in inputs]),
                hash_pre=not allocates and session.hash_inputs,
            )
            if session.breaks is not None:
                session.before_launch(f"aten::{base}")
        except Exception as e:
            session.fail(e)
            return func(*args, **kwargs)
        out = func(*args, **kwargs)
        try:
            _record(session, func, base, allocates, inputs, described, out)
        except Exception as e:
            session.fail(e)
        return out


def _flatten(
    func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> list[tuple[str, str, Any]]:
    """(name, access, value) for each argument, tensor lists spread out."""
    out = []
    schema = func._schema.arguments
    for i, arg in enumerate(schema):
        if i < len(args):
            value = args[i]
        elif arg.name in kwargs:
            value = kwargs[arg.name]
        else:
            continue
        written = arg.alias_info is not None and arg.alias_info.is_write
        access = ("out" if arg.kwarg_only else "inout") if written else "in"
        if isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value):
            out.extend((f"{arg.name}[{k}]", access, v) for k, v in enumerate(value))
        else:
            out.append((arg.name, access, value))
    return out


def _record(
    session: Any,
    func: Any,
    base: str,
    allocates: bool,
    inputs: list[tuple[str, str, Any]],
    described: Any,
    out: Any,
) -> None:
    results = _named_results(func, inputs, out)
    arg_specs = [(name, access) for name, access, _ in inputs]
    arg_specs += [(name, "out") for name, _ in results]
    name = f"aten::{base}" + (f".{func._overloadname}" if func._overloadname != "default" else "")
    key = ("aten", name, tuple(arg_specs))

    def define() -> dict[str, Any]:
        meta: dict[str, Any] = {"allocates": allocates}
        if reads_to_host(func):
            meta["host_read"] = True
        return {
            "name": name,
            "backend": "aten",
            "args": [{"name": n, "type": "", "access": a} for n, a in arg_specs],
            "source": None,
            "meta": meta,
            "config": {},
        }

    kernel = session.kernel_id(key, define)
    # Fresh memory's bytes mean nothing, so an allocation is not hashed;
    # nor is an output the op returns without writing it.
    unwritten = () if allocates else unwritten_outputs(base, inputs)
    codes = bytes(
        ord("a") if allocates or result in unwritten else ord("o") for result, _ in results
    )
    session.extend(described, [tensor for _, tensor in results], codes)
    session.launch(kernel, [], 0, described)


def _named_results(
    func: Any, inputs: list[tuple[str, str, Any]], out: Any
) -> list[tuple[str, torch.Tensor]]:
    """The tensors the op returned, each named by its schema (``result``,
    or ``result{i}`` by position, where the schema names none). An out=
    variant's returned out argument is already recorded, so is left out."""
    values = list(out) if isinstance(out, (list, tuple)) else [out]
    returns = _return_names(func)
    # A Tensor[] return spreads over several values: name them by position.
    named = len(values) == len(returns)
    given = [v for _, _, v in inputs if isinstance(v, torch.Tensor)]
    results = []
    for i, value in enumerate(values):
        if not isinstance(value, torch.Tensor) or any(value is g for g in given):
            continue
        name = returns[i] if named else ""
        results.append((name or (f"result{i}" if len(values) > 1 else "result"), value))
    return results

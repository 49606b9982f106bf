"""torch.distributed's receives, each recorded as a launch once the
program has it: when it waits for the receive's ``Work``.

A send is recorded by the aten mode like any op, when it is called (it
only reads its tensor). A receive's tensor holds what came in only once
the receive completes, and waiting for that where the program called it
could deadlock an exchange (each rank receiving before it sends). So
``ProcessGroup.recv`` and ``recv_anysource`` are wrapped to remember the
receive (the aten mode skips its op), and ``Work.wait`` to record it,
with its tensors hashed after, when the program's wait returns: a
``c10d::recv_`` launch (``c10d::recv_any_source_``, with the source its
``Work`` reports) placed where the program waits, which is where the
received bytes become the program's. A receive never waited for through
``Work.wait`` (a coalesced batch waited for as one) is recorded at the
next wait of any ``Work`` once it has completed; one still pending when
recording stops is not recorded."""

from __future__ import annotations

import dataclasses
import functools
import threading
from typing import Any

from .. import _active
from .._host import process_group_value
from . import methods

# The wrapped calls while installed: (owner, attribute, original).
_WRAPPED: list[tuple[Any, str, Any]] = []

# Receives started and not yet recorded: id(work) -> _Receive.
_PENDING: dict[int, _Receive] = {}
_PENDING_LOCK = threading.Lock()


@dataclasses.dataclass(slots=True)
class _Receive:
    """A receive the program started: its ``Work`` (kept alive so that its
    id stays its own), its op, tensors, group, source (None: any) and tag."""

    work: Any
    op: str
    tensors: list[Any]
    group: Any
    src: int | None
    tag: int


def _c10d() -> Any:
    import torch

    return getattr(torch._C, "_distributed_c10d", None)


def install(session: Any) -> None:
    """Wraps the receives and ``Work.wait`` when torch has c10d and
    ``session`` records c10d's receives."""
    c10d = _c10d()
    if _WRAPPED or c10d is None:
        return
    group, work = c10d.ProcessGroup, c10d.Work
    for method, op, params in (
        ("recv", "c10d::recv_", ("tensors", "srcRank", "tag")),
        ("recv_anysource", "c10d::recv_any_source_", ("tensors", "tag")),
    ):
        if session.wants(op):
            _wrap(group, method, _started(op, params))
    _wrap(work, "wait", _waited)


def uninstall() -> None:
    while _WRAPPED:
        owner, name, original = _WRAPPED.pop()
        setattr(owner, name, original)
    with _PENDING_LOCK:
        _PENDING.clear()


def _wrap(owner: Any, name: str, wrapper: Any) -> None:
    original = getattr(owner, name)
    setattr(owner, name, methods.method(functools.wraps(original)(wrapper(original))))
    _WRAPPED.append((owner, name, original))


def _started(op: str, params: tuple[str, ...]) -> Any:
    """A wrapper of a receive method taking ``params`` that remembers each
    receive, for the active session."""

    def wrapper(original: Any) -> Any:
        def receive(group: Any, *args: Any, **kwargs: Any) -> Any:
            work = original(group, *args, **kwargs)
            session = _active.active()
            if session is not None and work is not None:
                try:
                    with _active.dynamo_off():
                        _remember(work, op, params, group, args, kwargs)
                except Exception as e:
                    session.fail(e)
            return work

        return receive

    return wrapper


def _remember(
    work: Any,
    op: str,
    params: tuple[str, ...],
    group: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    """Keeps a receive the program started until it waits for it."""
    given = dict(zip(params, args, strict=False)) | kwargs
    started = _Receive(
        work,
        op,
        list(given["tensors"]),
        group,
        given.get("srcRank"),
        int(given.get("tag", 0)),
    )
    with _PENDING_LOCK:
        _PENDING[id(work)] = started


def _waited(original: Any) -> Any:
    """A wrapper of ``Work.wait`` that records the receives it completed."""

    def wait(work: Any, *args: Any, **kwargs: Any) -> Any:
        done = original(work, *args, **kwargs)
        if _PENDING:
            try:
                with _active.dynamo_off():
                    _record_completed(work)
            except Exception as e:  # never the program's error
                session = _active.active()
                if session is not None:
                    session.fail(e)
        return done

    return wait


def _record_completed(waited: Any) -> None:
    """Records the receive of ``waited`` and every other pending receive
    that has completed, in the order they were started."""
    session = _active.active()
    if session is None or _active.in_launch():
        return  # torch's own wait: the program's comes later
    with _PENDING_LOCK:
        ready = [
            key
            for key, receive in _PENDING.items()
            if receive.work is waited or _completed(receive.work)
        ]
        receives = [_PENDING.pop(key) for key in ready]
    for receive in receives:
        try:
            _record(session, receive)
        except Exception as e:
            session.fail(e)
            return


def _completed(work: Any) -> bool:
    try:
        return bool(work.is_completed())
    except Exception:
        return False


def _record(session: Any, receive: _Receive) -> None:
    """Writes the receive's launch record, its tensors hashed now."""
    src = receive.src if receive.src is not None else receive.work._source_rank()
    names = [f"tensors[{i}]" for i in range(len(receive.tensors))]
    params = ["process_group", "src", "tag"]

    def definition() -> dict[str, Any]:
        args = [{"name": n, "type": "", "access": "out"} for n in names]
        args += [{"name": n, "type": "", "access": "in"} for n in params]
        return {
            "name": receive.op,
            "backend": "aten",
            "args": args,
            "source": None,
            "meta": {"allocates": False},
            "config": {},
        }

    kernel = session.kernel_id(("aten", receive.op, len(names)), definition)
    if session.breaks is not None:
        session.before_launch(receive.op)
    values = [*receive.tensors, process_group_value(receive.group), src, receive.tag]
    access = b"o" * len(names) + b"i" * len(params)
    described = session.describe(values, access, hash_pre=False, inherit=False)
    session.launch(kernel, [], 0, described)

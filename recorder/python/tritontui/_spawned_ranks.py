"""Ranks started with ``torch.multiprocessing.spawn`` (or
``start_processes``), or as ``multiprocessing`` processes of the spawn
start method, record, each into its own trace, as torchrun's do.

In the process that spawns them (the launcher), a recording session hands
over when torch's ``start_processes`` starts the ranks: its path and
options go to the children in ``TRITONTUI_SPAWNED_RANKS``, and its own
trace is closed, deleted when it recorded no launch, else kept as
``PATH.launcher`` (out of the way of rank 0's trace, and of a folder of
rank traces). A plain ``multiprocessing`` child may be a rank or a data
loader's worker: the session passes the same variable to each one it
starts and goes on recording; a child that becomes the rank whose trace
path is the launcher's moves the launcher's trace (still being written)
to ``PATH.launcher`` first.

A spawned child does not know its rank when it starts: it learns it when
it joins its process group. It starts recording when
``torch.distributed.init_process_group`` returns, with the rank and world
size of the default group (what it ran before that is not recorded), and
removes the variable so its own children (compile workers, data loader
workers) record nothing.
"""

from __future__ import annotations

import functools
import json
import multiprocessing.process
import os
import sys
import warnings
from typing import Any

from . import _active, _custom_hash, _environment

# The option that multiprocessing gives a child it spawns.
SPAWNED_CHILD_FLAG = "--multiprocessing-fork"
_INSTALLED = False
# The child's index among the processes its launcher spawned (its local
# rank), once torch's entry point has run.
_INDEX: int | None = None


def install() -> None:
    """Hands recording over to the ranks whenever this process spawns some
    through torch while recording, and passes it on to every process it
    starts with multiprocessing (once; the hooks check for a session at
    each call)."""
    global _INSTALLED
    if _INSTALLED:
        return
    module = sys.modules.get("torch.multiprocessing.spawn")
    if module is None:
        return
    original = module.start_processes
    launching = _launching(original)
    module.start_processes = launching
    mp = sys.modules["torch.multiprocessing"]
    if getattr(mp, "start_processes", None) is original:
        mp.start_processes = launching
    process = multiprocessing.process.BaseProcess
    process.start = _starting(process.start)
    _INSTALLED = True


def _starting(original: Any) -> Any:
    """``multiprocessing``'s ``Process.start``, passing the recording on
    to the child (which records only if it joins a process group)."""

    @functools.wraps(original)
    def start(process: Any) -> Any:
        session = _active.active()
        if session is None or _environment.get(_environment.SPAWNED_RANKS):
            return original(process)
        handed = {**_handed(session), "launcher_trace": os.path.abspath(session.path)}
        return _with_handover(json.dumps(handed), original, process)

    return start


def _handed(session: Any) -> dict[str, Any]:
    """What a rank needs to record as ``session`` would have: the path as
    given, the options, and a run id its ranks share."""
    return {
        "path": session.template,
        "options": {
            "hash": session.options.hash,
            "aten": session.options.aten,
            "kernels": session.options.kernels,
            "stats": session.options.stats,
            "samples": session.options.samples,
            "rows": session.options.rows,
            "capture": session.options.capture,
            "capture_budget": session.options.capture_budget,
            # A callable stays in this process; a named function goes along.
            "hash_fn": session.custom_hash.name
            if session.custom_hash and session.custom_hash.name in _custom_hash.KNOWN
            else None,
        },
        "run_id": f"{os.getpid()}-{session.created_ns}",
    }


def _with_handover(handed: str | None, original: Any, *args: Any, **kwargs: Any) -> Any:
    """Runs ``original``, the children it starts finding ``handed`` in
    their environment (nothing when None)."""
    if handed is None:
        return original(*args, **kwargs)
    _environment.hand_over(_environment.SPAWNED_RANKS, handed)
    try:
        return original(*args, **kwargs)
    finally:
        _environment.take(_environment.SPAWNED_RANKS)


def _launching(original: Any) -> Any:
    @functools.wraps(original)
    def start_processes(*args: Any, **kwargs: Any) -> Any:
        session = _active.active()
        if session is None:
            return original(*args, **kwargs)
        handed = None
        try:
            handed = _hand_over(session)
        except Exception as e:  # the program goes on; its ranks unrecorded
            warnings.warn(
                f"tritontui: the spawned ranks are not recorded: {e!r}",
                RuntimeWarning,
                stacklevel=2,
            )
        return _with_handover(handed, original, *args, **kwargs)

    return start_processes


def _hand_over(session: Any) -> str:
    """Stops ``session`` (this process is the ranks' launcher) and returns
    what its ranks need to record as it would have."""
    from . import _session

    handed = _handed(session)
    launches = session.seq
    _session.stop("the ranks were spawned")
    where = "it recorded no launch, so it has no trace"
    if launches == 0:
        os.remove(session.path)
    else:
        os.replace(session.path, session.path + ".launcher")
        where = f"its own {launches} launches are in {session.path}.launcher"
    print(
        f"tritontui: the spawned ranks record into {session.template} (one trace per "
        f"rank, from when it joins its process group); this launcher process stops "
        f"recording: {where}",
        file=sys.stderr,
    )
    return json.dumps(handed)


def take_handover() -> str:
    """What a recording launcher handed to this process, if it is a child
    that multiprocessing spawned; else "". Takes the variable out of the
    environment either way, so that no process this one starts records."""
    handed = _environment.take(_environment.SPAWNED_RANKS)
    return handed if SPAWNED_CHILD_FLAG in sys.argv else ""


def await_rank(handed: str) -> None:
    """Starts recording, as ``handed`` (from the launcher's
    ``TRITONTUI_SPAWNED_RANKS``) says, when this spawned child joins its
    process group (called once torch is imported). Where it cannot (a
    torch built without torch.distributed), warns and records nothing."""
    try:
        _hook_joining(json.loads(handed))
    except Exception as e:
        warnings.warn(
            f"tritontui: this spawned rank is not recorded: {e!r}", RuntimeWarning, stacklevel=1
        )


def _hook_joining(handed: dict[str, Any]) -> None:
    import torch.distributed as dist
    import torch.distributed.distributed_c10d as c10d

    original = c10d.init_process_group
    joined = _joined(original, handed)
    c10d.init_process_group = joined
    if getattr(dist, "init_process_group", None) is original:
        dist.init_process_group = joined
    spawn = sys.modules.get("torch.multiprocessing.spawn")
    if spawn is not None:
        spawn._wrap = _indexed(spawn._wrap)


def _indexed(wrap: Any) -> Any:
    """torch's entry point of a spawned process, noting its index."""

    @functools.wraps(wrap)
    def indexed(fn: Any, i: int, *args: Any) -> Any:
        global _INDEX
        _INDEX = i
        return wrap(fn, i, *args)

    return indexed


def _joined(original: Any, handed: dict[str, Any]) -> Any:
    pending = [handed]

    @functools.wraps(original)
    def init_process_group(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        with _active.LOCK:
            if pending and _active.active() is None:
                _start_rank(pending.pop())
        return result

    return init_process_group


def _index_or(rank: int) -> int:
    """The spawned child's index (its local rank), else its rank."""
    return _INDEX if _INDEX is not None else rank


def _start_rank(handed: dict[str, Any]) -> None:
    import torch.distributed as dist

    from . import _options, _session

    try:
        rank = dist.get_rank()
        local = _environment.local_rank()
        place = {
            "rank": rank,
            "world_size": dist.get_world_size(),
            "local_rank": _index_or(rank) if local is None else local,
            "local_world_size": 0,
            "node_rank": 0,
            "run_id": handed["run_id"],
        }
        _move_launcher_trace(handed, _session.expand_path(handed["path"], place))
        _session.start(handed["path"], _options.resolve(handed["options"]), place)
    except Exception as e:
        warnings.warn(
            f"tritontui: this rank could not start recording to {handed['path']}: {e!r}",
            RuntimeWarning,
            stacklevel=1,
        )


def _move_launcher_trace(handed: dict[str, Any], path: str) -> None:
    """Moves the launcher's trace out of this rank's way when it has this
    rank's path (a launcher that is not a rank writes rank 0's path); the
    launcher, which goes on writing it, is not disturbed."""
    launcher = handed.get("launcher_trace")
    if launcher and launcher == os.path.abspath(path) and os.path.exists(launcher):
        os.replace(launcher, launcher + ".launcher")
        print(
            f"tritontui: the launcher's trace is now {launcher}.launcher (its path is this rank's)",
            file=sys.stderr,
        )

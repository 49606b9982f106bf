"""CUDA graphs, recorded as they run.

Inductor's CUDA graph trees (``mode="reduce-overhead"``), its older
``cudagraphify``, ``torch.cuda.graph``, ``make_graphed_callables`` and the
``cudagraphs`` backend all capture through ``torch.cuda.CUDAGraph``'s
``capture_begin``/``capture_end`` and replay through its ``replay``. While
recording, a capture makes the launches it sees captured ones (the native
trace hashes them into the graph, on the capturing stream), and each
replay writes one ``replay`` record whose hashes are read back from the
graph's table behind it: the graphs stay on and no launch of a replay
costs the host anything.

With ``cuda_graphs=False`` (``TRITONTUI_CUDA_GRAPHS=0``) the recorder turns
them off instead, as it did before it could record them: compiles asking
for them are made without (a ``compile`` record says so) and the header
says it was asked.
"""

from __future__ import annotations

import warnings
from typing import Any

from .. import _active

_KEY = "triton.cudagraphs"
# What install replaced, to put back at uninstall: (owner, name, original).
_REPLACED: list[tuple[Any, str, Any]] = []
# The attribute a captured torch.cuda.CUDAGraph keeps its trace id in:
# (the session, the graph's id in its trace, the capture's device).
_ID = "_tritontui_graph"


def install(session: Any) -> None:
    if _REPLACED:
        return
    import torch

    if not session.options.cuda_graphs:
        _compile_without(session, torch)
        return
    graph = getattr(getattr(torch.cuda, "graphs", None), "CUDAGraph", None)
    if graph is None or not torch.cuda.is_available():
        return
    _record_captures(session, graph, torch)


def uninstall() -> None:
    while _REPLACED:
        owner, name, original = _REPLACED.pop()
        setattr(owner, name, original)


def _replace(owner: Any, name: str, new: Any) -> Any:
    original = owner.__dict__[name]
    _REPLACED.append((owner, name, original))
    setattr(owner, name, new)
    return original


def _record_captures(session: Any, graph_class: Any, torch: Any) -> None:
    begin = graph_class.capture_begin
    end = graph_class.capture_end
    replay = graph_class.replay
    raw_stream = torch._C._cuda_getCurrentRawStream

    def capture_begin(self: Any, *args: Any, **kwargs: Any) -> Any:
        # Before the driver's capture begins: the graph's table may be
        # allocated now, and no later.
        try:
            with _active.dynamo_off():
                device = torch.cuda.current_device()
                hashing = session.options.hash_inputs or session.options.hash_outputs
                graph, missing = session.file.cuda_graph_begin(
                    device, raw_stream(device), hashing and session.device_hashing
                )
                if hashing and not session.device_hashing:
                    missing = missing or (
                        "CUDA tensors are hashed on the host in this process, "
                        "which no capture can do"
                    )
                setattr(self, _ID, (session, graph, device, missing))
        except Exception as e:
            session.fail(e)
            return begin(self, *args, **kwargs)
        try:
            began = begin(self, *args, **kwargs)
        except BaseException:
            _end(session, self, "the capture did not begin")
            raise
        try:
            # The graph's first node zeroes its hash table at each replay.
            with _active.dynamo_off():
                uncleared = session.file.cuda_graph_began()
            if uncleared is not None:
                known = getattr(self, _ID)
                setattr(self, _ID, (*known[:3], known[3] or uncleared))
        except Exception as e:
            session.fail(e)
        return began

    def capture_end(self: Any) -> Any:
        known = getattr(self, _ID, None)
        if known is not None and known[0] is session:
            try:
                # Hashes still waiting for the next captured launch join
                # the graph now.
                session.file.before_capture_end()
            except Exception as e:
                session.fail(e)
        try:
            return end(self)
        finally:
            _end(session, self, None)

    def replayed(self: Any) -> Any:
        known = getattr(self, _ID, None)
        seen = known is not None and known[0] is session
        stream = 0
        try:
            # Hashes deferred so far run before the replay; the graph
            # call's input hashes may run beside it.
            stream = raw_stream(known[2]) if seen else 0
            session.file.before_replay(known[1] if seen else None, stream)
        except Exception as e:
            session.fail(e)
        result = replay(self)
        try:
            if not (seen and session.file.cuda_graph_replayed(known[1], stream)):
                _unseen_capture(session, self)
        except Exception as e:
            session.fail(e)
        return result

    _replace(graph_class, "capture_begin", capture_begin)
    _replace(graph_class, "capture_end", capture_end)
    _replace(graph_class, "replay", replayed)
    _warm_up_holding_nothing(session)


def _warm_up_holding_nothing(session: Any) -> None:
    """A CUDA graph tree warms each function up eagerly with every
    allocation served from the graph's pool, then fails on any block of
    the pool a tensor it does not know keeps alive: the tensors whose
    hashes wait for later launches (deferred hashes). While a function
    warms up, hashes are therefore enqueued launch by launch."""
    try:
        from torch._inductor.cudagraph_trees import CUDAWarmupNode
    except Exception:
        return
    run = CUDAWarmupNode.run

    def warm_up(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not session.defers_hashes:
            return run(self, *args, **kwargs)
        session.file.defer_hashes = False
        try:
            return run(self, *args, **kwargs)
        finally:
            session.file.defer_hashes = True

    _replace(CUDAWarmupNode, "run", warm_up)


def none_from_the_tree(tensors: list[Any], device: int) -> bool:
    """Whether none of ``tensors`` is a live output of the CUDA graph tree
    path now running on ``device``. A graph of the tree given such a
    tensor must see it die when it died while the graph was captured (a
    backward's saved activations): before each replay the tree checks
    that they are dead again, and fails the program if not. The recorder
    then must not keep them alive through the call."""
    import torch
    from torch._inductor import cudagraph_trees

    manager = cudagraph_trees.get_manager(device, create_if_none_exists=False)
    node = None if manager is None else manager.current_node
    if node is None:
        return True
    outputs = {ref.data_ptr() for ref in node.path_live_weakrefs()}
    return not any(
        t.untyped_storage().data_ptr() in outputs for t in tensors if isinstance(t, torch.Tensor)
    )


def _end(session: Any, graph: Any, failed: str | None) -> None:
    """The capture of ``graph`` ended (``failed`` says why it did not
    complete): its record goes into the trace."""
    known = getattr(graph, _ID, None)
    if known is None or known[0] is not session:
        return
    missing = failed or known[3]
    try:
        with _active.dynamo_off():
            session.file.cuda_graph_end(missing, None if failed else _pool(graph))
    except Exception as e:
        session.fail(e)


def _pool(graph: Any) -> tuple[int, int] | None:
    """The id of the memory pool ``graph``'s capture allocated from (graphs
    captured with ``pool=`` another's share it), when torch says."""
    try:
        pool = tuple(int(part) for part in graph.pool())
    except Exception:
        return None
    return pool if len(pool) == 2 and all(0 <= part < 1 << 64 for part in pool) else None


def _unseen_capture(session: Any, graph: Any) -> None:
    """A replay of a graph whose capture this recording did not see (made
    before recording began): its launches run unrecorded, said once per
    graph with a gap record."""
    if getattr(graph, "_tritontui_unseen", None) is session:
        return
    graph._tritontui_unseen = session
    warnings.warn(
        "tritontui: a CUDA graph captured before recording began was replayed; "
        "its launches are not recorded",
        RuntimeWarning,
        stacklevel=3,
    )
    session.file.gap(
        "replay",
        "a CUDA graph captured before recording began was replayed: its launches ran unrecorded",
    )


def _compile_without(session: Any, torch: Any) -> None:
    """``cuda_graphs=False``: compiles asking for CUDA graphs per compile
    (``mode="reduce-overhead"``, ``options={"triton.cudagraphs": True}``)
    are made without them, past the global setting the session turned
    off."""
    wrapper = getattr(torch, "_TorchCompileInductorWrapper", None)
    if wrapper is None:
        return

    def call(self: Any, model_: Any, inputs_: Any) -> Any:
        if not self.config.get(_KEY):
            return original(self, model_, inputs_)
        from torch._inductor.compile_fx import compile_fx

        _say_turned_off(session)
        return compile_fx(model_, inputs_, config_patches={**self.config, _KEY: False})

    original = _replace(wrapper, "__call__", call)


def _say_turned_off(session: Any) -> None:
    warnings.warn(
        "tritontui: this torch.compile asked for CUDA graphs; they are turned off while "
        "recording (cuda_graphs=False)",
        RuntimeWarning,
        stacklevel=4,
    )
    try:
        session.file.compile("graph", "torch.compile", {"cuda_graphs_disabled": True})
    except Exception as e:
        session.fail(e)

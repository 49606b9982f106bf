"""The hooks into torch, one module each, installed and removed together.

The C++, C++-wrapper, user-Triton, graph-input, kernel-site, AOTInductor, compile-event,
autotuning, wrapper-allocation and host-read hooks record into the
active session (``tritontui._active``), looked up when
they fire, so one left behind by a session that ended records nothing.
The Triton hook and the aten mode are given their session when installed
and record into it alone, as do the extern-kernel proxies (through the
mode's hook; ``TRITONTUI_EXTERN_HOOK=0`` leaves extern kernels to the
mode); the CUDA-graph check is given it to say in it
what it turned off; the process-group hook records the groups that
exist into it. None of them imports the session module."""

from __future__ import annotations

import contextlib
import sys
import warnings
from typing import Any

from .. import _environment, _modules
from . import (
    aot_inductor,
    aten,
    autotuning,
    compile_events,
    cpp,
    cpp_wrapper,
    cuda_graphs,
    extern_kernels,
    foreign_work,
    graph_inputs,
    host_reads,
    kernel_sites,
    point_to_point,
    process_groups,
    triton,
    user_triton,
)

_ATEN: aten.AtenObserver | aten.AtenRecorder | None = None


def install(session: Any) -> None:
    """Installs every hook for ``session`` (aten ops and host reads only
    when it records aten ops). While the session records fingerprints
    alone (``session.fingerprints_now``), only the hooks fingerprints
    need: graph calls, host reads and collectives through the aten
    observer, optimizer steps; no launch is recorded."""
    global _ATEN
    _hide_from_dynamo()
    full = not session.fingerprints_now
    if full:
        triton.install(session)
        user_triton.install()
        cpp.install()
        cpp_wrapper.install(session)
        aot_inductor.install()
    if full or not session.options.cuda_graphs:
        cuda_graphs.install(session)
    foreign_work.install()
    graph_inputs.install()
    kernel_sites.install()
    compile_events.install()
    autotuning.install()
    process_groups.install(session)
    if session.options.aten or not full:
        # Fingerprints need no op of a process without collectives but its
        # host reads, hooked where they return (`Tensor.item`); the
        # observer then sees optimizer steps alone, and torch boxes no
        # op's inputs for it.
        ops = full or _collectives_run(session)
        host_reads.install(item=not ops)
        if full:
            point_to_point.install(session)
        _ATEN = aten.start(session, ops)
        # The observer sees extern kernels' ops as it sees any; the mode
        # leaves them to native proxies, which cost no Python per call.
        if full and isinstance(_ATEN, aten.AtenRecorder) and not _environment.extern_hook_off():
            extern_kernels.install(_ATEN)


def uninstall() -> None:
    """Removes every hook; safe to call twice."""
    global _ATEN
    recorder, _ATEN = _ATEN, None
    extern_kernels.uninstall()
    if isinstance(recorder, aten.AtenObserver):
        recorder.detach()
    elif recorder is not None:
        _leave(recorder)
    triton.uninstall()
    # Wraps what foreign_work wraps (Work.wait): taken off first.
    point_to_point.uninstall()
    foreign_work.uninstall()
    user_triton.uninstall()
    cpp.uninstall()
    cpp_wrapper.uninstall()
    graph_inputs.uninstall()
    kernel_sites.uninstall()
    aot_inductor.uninstall()
    compile_events.uninstall()
    autotuning.uninstall()
    process_groups.uninstall()
    host_reads.uninstall()
    cuda_graphs.uninstall()
    _modules.forget()


def _collectives_run(session: Any) -> bool:
    """Whether this process is one rank of several, as its launcher says,
    or is in a process group: its collectives are fingerprinted through
    the aten observer. (A rank records from its start, before the program
    joins its process group.)"""
    if session.place is not None and session.place.get("world_size", 1) > 1:
        return True
    distributed = sys.modules.get("torch.distributed")
    try:
        return bool(distributed and distributed.is_available() and distributed.is_initialized())
    except Exception:
        return True


def _hide_from_dynamo() -> None:
    """Puts this package on Dynamo's skip list, as Dynamo does for the
    third-party libraries it must not trace (``trace_rules.add``): a hook
    that torch calls while a compiled function runs the parts it left
    eager (``CompiledFxGraph.__call__``, a collective's ``Work.wait``,
    a logging handler) is never compiled as a frame of its own, which
    the unrecorded program would not have. The native hooks turn
    Dynamo's frame callback off around their own work as well, so that
    nothing they call (a host argument's ``repr``) is compiled either."""
    try:
        from torch._dynamo import trace_rules
    except ImportError:
        return  # a torch without Dynamo compiles nothing
    package = __name__.partition(".")[0]
    if not trace_rules.check_file(sys.modules[package].__file__).skipped:
        trace_rules.add(package)


def _leave(mode: aten.AtenRecorder) -> None:
    """Pops the aten mode off this thread's dispatch stack when it is on
    top. Popping pops whatever is on top, so a mode that is not (an
    internal error inside its own dispatch, when torch has it off the
    stack and another mode, such as a compiler's fake-tensor mode, is
    there; another thread's stack; a mode pushed after it) is left where
    it is: with its session gone it runs every op as it comes."""
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    with contextlib.suppress(Exception):
        if _get_current_dispatch_mode() is mode:
            mode.__exit__(None, None, None)


def disable_cuda_graphs() -> bool:
    """``cuda_graphs=False``: CUDA graphs turned off while recording, where
    Inductor's global setting asks for them (``cuda_graphs`` turns them off
    per compile). Returns whether they were on."""
    try:
        import torch._inductor.config as config
    except Exception:
        return False
    if not config.triton.cudagraphs:
        return False
    config.triton.cudagraphs = False
    warnings.warn(
        "tritontui: CUDA graphs are turned off while recording, so every launch can be seen",
        RuntimeWarning,
        stacklevel=3,
    )
    return True

"""Pause points: stop the recorded process right before a chosen launch,
or an Inductor compile worker before it compiles a chosen kernel, so that a
debugger can be attached to it.

``TRITONTUI_BREAK`` (or ``record(break_at=...)``, or ``tritontui record
--break``) holds comma-separated launch sequence numbers (``12``) and
kernel-name globs (``triton_poi_*``); a glob pauses at the first launch of
each kernel that matches it. A paused process flushes its trace, writes a
``pause`` record, prints one line saying how to attach and resume, and
waits in the native ``tritontui_paused`` (what a debugger's backtrace
shows) until one of:

* a debugger attached to it lets it run (``continue`` in gdb),
* its resume file is removed (``tritontui resume TRACE`` does that),
* it receives ``SIGUSR1`` (main thread only).

Without pause points the hooks do one attribute test per launch.
"""

from __future__ import annotations

import contextlib
import ctypes
import fnmatch
import os
import signal
import socket
import sys
import tempfile
import threading
from typing import Any

from . import _environment, _native

# Milliseconds between checks while paused.
TICK_MS = 50
# prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY): lets any debugger of the same
# user attach when Yama's ptrace_scope is 1.
_PR_SET_PTRACER = 0x59616D61
_PR_SET_PTRACER_ANY = ctypes.c_ulong(-1 & 0xFFFFFFFFFFFFFFFF)


class PausePoints:
    """Parsed ``TRITONTUI_BREAK``: launch numbers and kernel-name globs."""

    def __init__(self, spec: str) -> None:
        self.launches: set[int] = set()
        self.globs: list[str] = []
        for part in (p.strip() for p in spec.split(",")):
            if not part:
                continue
            if part.isdigit():
                self.launches.add(int(part))
            else:
                self.globs.append(part)
        if not self.launches and not self.globs:
            raise ValueError(f"no launch number or kernel glob in pause points {spec!r}")

    def take(self, seq: int, kernel: str) -> bool:
        """Whether to pause before launch ``seq`` of ``kernel``. A matching
        glob is used up, across the recorded process and its compile
        workers: the first to match it claims it (see :func:`claim`)."""
        if seq in self.launches:
            self.launches.discard(seq)
            return True
        for index, glob in enumerate(self.globs):
            if fnmatch.fnmatchcase(kernel, glob):
                self.globs[index] = ""  # matches no kernel name
                return claim(index)
        return False


def claim(index: int) -> bool:
    """Claims glob number ``index`` for this process: a file created
    exclusively under the session's ``TRITONTUI_BREAK_ID``, so a glob stops
    one process once, not every compile worker that meets it."""
    session = _environment.get(_environment.BREAK_ID)
    if not session:
        return True
    path = os.path.join(tempfile.gettempdir(), f"tritontui-claimed-{session}-{index}")
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    except OSError:
        return True
    return True


def release_claims() -> None:
    """Removes the claim files of this process's session."""
    session = _environment.take(_environment.BREAK_ID)
    if not session:
        return
    directory = tempfile.gettempdir()
    prefix = f"tritontui-claimed-{session}-"
    with contextlib.suppress(OSError):
        for name in os.listdir(directory):
            if name.startswith(prefix):
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(directory, name))


def resume_file_for(pid: int) -> str:
    """The file whose existence keeps process ``pid`` paused."""
    return os.path.join(tempfile.gettempdir(), f"tritontui-paused-{pid}")


def allow_any_tracer() -> bool:
    """Lets a debugger that is not our parent attach (Yama ptrace_scope 1)."""
    try:
        return (
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PTRACER, _PR_SET_PTRACER_ANY, 0, 0, 0)
            == 0
        )
    except (OSError, AttributeError):
        return False


def pause(session: Any, launch: int | None, kernel: str) -> None:
    """Stops the recording process here until resumed, with its own pause
    records in the trace; see the module documentation."""
    where = (socket.gethostname(), launch, kernel, resume_file_for(os.getpid()))
    session.file.pause("paused", *where)
    by = stop_here(session.path, launch, kernel, before=session.flush)
    session.file.pause("resumed", *where, by)
    session.flush()


def stop_here(trace: str, launch: int | None, kernel: str, before: Any = None) -> str:
    """Creates the resume file, calls ``before`` (the trace's flush), says
    how to attach and resume, and waits; returns what resumed it."""
    pid = os.getpid()
    resume_file = resume_file_for(pid)
    allow_any_tracer()
    with open(resume_file, "w") as f:
        f.write(f"{trace}\n{launch if launch is not None else ''}\n{kernel}\n")
    if before is not None:
        before()
    where = f"launch #{launch} ({kernel})" if launch is not None else f"compiling {kernel}"
    print(
        f"tritontui: pid {pid} paused before {where}; attach: tritontui attach "
        f"{trace} --pid {pid} (or gdb -p {pid}); resume: tritontui resume "
        f"{trace} (or kill -USR1 {pid})",
        file=sys.stderr,
        flush=True,
    )
    try:
        return wait(resume_file)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(resume_file)


def install_in_compile_worker() -> None:
    """In an Inductor compile worker under ``TRITONTUI_BREAK`` with kernel
    globs: pauses before compiling a matching Triton kernel. The recording
    process's watcher sees the resume file and writes the pause records."""
    spec = _environment.get(_environment.BREAK)
    if not spec or not any("compile_worker" in a for a in sys.argv):
        return
    points = PausePoints(spec)
    if not points.globs:
        return
    from torch._inductor.runtime import compile_tasks

    original = compile_tasks._worker_compile_triton
    trace = _environment.get(_environment.TRACE) or "TRACE"

    def compile_after_pause(load_kernel: Any, *args: Any, **kwargs: Any) -> Any:
        kernel = load_kernel()
        name = kernel.inductor_meta.get("kernel_name") or kernel.fn.__name__
        if points.take(-1, name):
            stop_here(trace, None, name)
        return original(lambda: kernel, *args, **kwargs)

    compile_tasks._worker_compile_triton = compile_after_pause


def wait(resume_file: str) -> str:
    """Waits until resumed; says how: ``debugger``, ``file`` or ``signal``."""
    signalled = threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGUSR1, lambda *_: signalled.set())
    try:
        while True:
            if signalled.is_set():
                return "signal"
            # The file and debugger checks run natively, inside the frame
            # a debugger's backtrace shows.
            how = _native.pause_tick(TICK_MS, resume_file)
            if how is not None:
                return how
    finally:
        if previous is not None:
            signal.signal(signal.SIGUSR1, previous)

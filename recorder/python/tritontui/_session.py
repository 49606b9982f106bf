"""A recording session: the open trace, what has been interned in it, and
the rule that the recorder never breaks the program it records.

Every hook calls into the active :class:`Session`. If anything inside the
recorder fails, the session warns once, stops recording and closes the
trace; the program goes on with its own results untouched.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import platform
import socket
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from . import (
    _active,
    _capture,
    _custom_hash,
    _environment,
    _fingerprints,
    _native,
    _options,
    _pause,
    _results,
    _settings,
    _tensors,
    hooks,
)
from .hooks import host_reads

# Whether a session still recording when the interpreter exits is stopped
# then (registered with the first session).
_STOPS_AT_EXIT = False

# Graph inputs hashed in one device batch (a batch holds 1,024 results).
INPUTS_PER_BATCH = 512


def distributed() -> dict[str, Any] | None:
    """This process's place in a multi-process run, as its launcher
    (torchrun) set it in the environment: the header's ``distributed``;
    None outside one."""
    return _environment.torchrun_placement()


def expand_path(path: str | os.PathLike[str], place: dict[str, Any] | None = None) -> str:
    """Fills in ``{pid}``, ``{rank}``, ``{local_rank}`` and ``{world_size}``
    (from ``place``, else torchrun's environment; 0, 0 and 1 outside a
    multi-process run). In a run of several ranks a path without ``{rank}``
    gets ``-rank{rank}`` before its extension, so that ranks never write
    into one file."""
    text = os.fspath(path)
    place = place or distributed() or {"rank": 0, "local_rank": 0, "world_size": 1}
    if place["world_size"] > 1 and "{rank}" not in text:
        root, extension = os.path.splitext(text)
        text = f"{root}-rank{{rank}}{extension}"
    return text.format(
        pid=os.getpid(),
        rank=place["rank"],
        local_rank=place["local_rank"],
        world_size=place["world_size"],
    )


def _versions() -> dict[str, Any]:
    out: dict[str, Any] = {"torch": None, "triton": None, "cuda": None, "devices": []}
    torch = sys.modules.get("torch")
    if torch is not None:
        out["torch"] = torch.__version__
        out["cuda"] = torch.version.cuda
        try:
            if torch.cuda.is_available():
                out["devices"] = [
                    torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())
                ]
        except Exception:
            out["devices"] = []
    if not out["devices"]:
        out["devices"] = [f"cpu: {platform.processor() or platform.machine()}"]
    triton = sys.modules.get("triton")
    if triton is not None:
        out["triton"] = getattr(triton, "__version__", None)
    else:
        out["triton"] = _installed_triton()
    return out


def _installed_triton() -> str | None:
    """The version of the Triton that torch will import, read from its
    package's metadata without importing it: a recording usually begins
    before Inductor first imports triton. As `triton.__version__` says it
    (pytorch-triton's `3.6.0+git1234` is `3.6.0` there); None when none is
    installed."""
    import importlib.metadata

    for package in ("triton", "pytorch-triton"):
        try:
            return importlib.metadata.version(package).split("+")[0]
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


class Session:
    """One trace being written.

    ``place``: this process's rank in a multi-process run when it is not
    in the environment (a rank started by ``torch.multiprocessing.spawn``
    learns it from its process group); else ``distributed()``."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        options: _options.Options,
        place: dict[str, Any] | None = None,
    ) -> None:
        self.options = options
        # The path as given, before ``{rank}`` and the rest are filled in.
        self.template = os.fspath(path)
        self.place = place or distributed()
        self.path = expand_path(path, self.place)
        self.breaks = _pause.PausePoints(options.break_at) if options.break_at else None
        # Launches captured by value, when asked for.
        self.capture = (
            _capture.Capture(options.capture, options.capture_budget, self.path)
            if options.capture
            else None
        )
        # The program's own hash function, run beside the exact hashes.
        self.custom_hash = _custom_hash.resolve(options.hash_fn)
        # What the native hooks need of the options, typed.
        self.hook_options = _native.HookOptions(
            options.hash_inputs,
            options.hash_outputs,
            options.stats,
            options.samples,
            options.rows,
            self.breaks is not None,
            self.capture is not None or self.custom_hash is not None,
        )
        # The numerics flags as last sampled (set when the trace opens).
        self.numerics: _settings.Numerics | None = None
        # Graphs whose launches no hook sees (compiled with cpp_wrapper),
        # each told to the user and the trace once.
        self.unrecorded_graphs: set[str] = set()
        # Graphs whose kernels' call sites are in the trace (written at
        # each one's first call).
        self.sited_graphs: set[str] = set()
        # Whether a launch whose arguments could not be described was
        # told to the user (once; the trace has a gap record for each).
        self.said_unrecorded_launch = False
        self.failed = False
        # When the trace was created (its header's created_ns).
        self.created_ns = 0
        self._last_seq = 0
        self._kernel_ids: dict[Any, int] = {}
        self._source_ids: dict[str, int] = {}
        # The native trace (``_native.TraceFile``); None once closed.
        self.file: Any = None
        # Whether CUDA tensors are hashed on the device (see _tensors).
        self.device_hashing = False
        # Whether device hashes inside a graph call may wait for later
        # launches (set when the trace opens).
        self.defers_hashes = False
        # The training step running, from 0 at the start, and what ends
        # one: the first of an optimizer's step() (``optimizer``) and
        # ``tritontui.step()`` (``user``) to end one.
        self.step = 0
        self.steps_ended_by: str | None = None
        # What the program trains, whose tensors are fingerprinted at each
        # step's end.
        self.training = _results.TrainingState()
        # Whether a graph call inside a CUDA graph capture went without
        # fingerprints (said once in the trace).
        self.said_captured_fingerprint = False

    @property
    def fingerprints_now(self) -> bool:
        """Whether only fingerprints are recorded now: with
        ``fingerprint``, or with ``from_step`` before that step begins."""
        options = self.options
        if not options.fingerprint and options.from_step is None:
            return False
        return options.from_step is None or self.step < options.from_step

    # -- lifecycle -------------------------------------------------------

    def open(self) -> None:
        """Creates the trace and writes its header, then the tensors the
        program holds as recording begins."""
        versions = _versions()
        inherits = self.inherits_hashes()
        self.created_ns = time.time_ns()
        header = {
            "format": "tritontui-trace",
            "version": [1, 3],
            "tool": "tritontui-recorder " + _version(),
            "created_ns": self.created_ns,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "argv": list(sys.argv),
            **versions,
            "options": {
                "hash": _native.HASH_ALGORITHM
                if (self.options.hash_inputs or self.options.hash_outputs)
                else "none",
                "hash_inputs": self.options.hash_inputs,
                "hash_outputs": self.options.hash_outputs,
                "stats": self.options.stats,
                "samples": self.options.samples,
                "rows": self.options.rows,
                "aten": self.options.aten,
                "kernels": self.options.kernels,
                "cuda_graphs_disabled": not self.options.cuda_graphs,
                "inherited_hashes": inherits,
                "fingerprint": self.options.fingerprint or self.options.from_step is not None,
                "from_step": self.options.from_step,
                "to_step": self.options.to_step,
            },
        }
        if self.place is not None:
            header["distributed"] = self.place
        # The flags sampled while recording, as they are now: a settings
        # record says when they change.
        self.numerics = _settings.Numerics()
        header["settings"] = _settings.settings(self.numerics)
        _probe_tensor_impl()
        # `run0/rank{rank}.msgpack`: each rank's trace in one folder.
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        self.file = _native.TraceFile(self.path, json.dumps(header), tempfile.gettempdir())
        self.file.inherit_hashes = inherits
        # Where hashes are inherited, device hashes may wait for the next
        # launch's table, and a graph call's input hashes run beside it
        # (TRITONTUI_DEFER_HASHES=0: launch by launch, inputs first).
        self.defers_hashes = inherits and not _environment.deferred_hashes_off()
        self.file.defer_hashes = self.defers_hashes
        self.device_hashing = _tensors.gpu_hashing()
        if _environment.any_tracer_allowed():
            _pause.allow_any_tracer()
        # Compile workers started from now on name the trace when they
        # pause, and share the session's pause points with it.
        _environment.hand_over(_environment.TRACE, self.path)
        if self.breaks is not None:
            _environment.hand_over(_environment.BREAK_ID, f"{os.getpid()}-{time.time_ns()}")
        # Steps recorded in full from a later step hold what they began
        # with from there.
        if not (self.fingerprints_now and self.options.from_step is not None):
            self._record_held()

    def inherits_hashes(self) -> bool:
        """Whether a launch inside a graph call takes its hashes before
        from the data flow where it can (``known_views`` in the trace
        crate): only when every launch there is recorded (aten ops, every
        kernel) and hashed before and after, and not turned off with
        ``TRITONTUI_HASH_EVERY_INPUT=1``."""
        return (
            self.options.aten
            and self.options.kernels == "*"
            and self.options.hash_inputs
            and self.options.hash_outputs
            and not _environment.every_input_hashed()
        )

    def close(self, reason: str = "exit") -> None:
        """Records the program's results (unless an internal error stopped
        recording) and any new child processes, writes the end record,
        flushes."""
        if self.breaks is not None:
            _pause.release_claims()
            self._say_pause_points_left()
        if self.capture is not None:
            self.capture.close()
            if self.capture.error is not None:
                warnings.warn(
                    f"tritontui: captured values were not all written ({self.capture.error!r})",
                    RuntimeWarning,
                    stacklevel=3,
                )
        if self.file is not None and not self.failed:
            self._record_results()
        if self.file is not None:
            self._last_seq = self.file.next_seq
        now = self.now()
        file, self.file = self.file, None
        if file is not None:
            file.close(now, reason)

    def _say_pause_points_left(self) -> None:
        """Warns of the launch numbers among the pause points that never
        paused: a pause point is never ignored in silence."""
        left = sorted(self.breaks.launches) if self.breaks is not None else []
        if not left:
            return
        last = self.seq - 1
        passed = [n for n in left if n <= last]
        unreached = [n for n in left if n > last]
        said = []
        if passed:
            said.append(
                f"launch {', '.join(map(str, passed))} passed without a pause (recorded "
                "by a path that cannot stop before it)"
            )
        if unreached:
            said.append(
                f"launch {', '.join(map(str, unreached))} was never reached "
                f"(the recording's last launch is {last})"
            )
        warnings.warn(
            f"tritontui: pause points not taken: {'; '.join(said)}",
            RuntimeWarning,
            stacklevel=4,
        )

    def _described_live(self, named: bool) -> list[tuple[Any, list[str]]]:
        """The tensors alive now, described and hashed in device batches,
        each with the names of its tensors (when ``named``); every batch is
        described before any is written, so that an error leaves none (a
        partial set would be taken for all)."""
        return [
            (
                self.describe(
                    [live.tensor for live in chunk], b"i" * len(chunk), hash_pre=True, inherit=False
                ),
                [live.name for live in chunk],
            )
            for group in _results.by_device(_results.live_tensors(named)).values()
            for chunk in (
                group[start : start + INPUTS_PER_BATCH]
                for start in range(0, len(group), INPUTS_PER_BATCH)
            )
        ]

    def _record_held(self) -> None:
        """The tensors alive as recording begins, hashed, one ``held``
        record per device batch: a result still holding those bytes at the
        end, which no recorded launch wrote, is no result of the recorded
        region. When they cannot all be described there are none, and
        every result is compared."""
        try:
            for described, _ in self._described_live(named=False):
                self.file.held(described)
        except Exception as e:
            warnings.warn(
                f"tritontui: the tensors alive before recording were not recorded ({e!r}); "
                "every tensor alive at the end counts as a result",
                RuntimeWarning,
                stacklevel=3,
            )

    def _record_results(self) -> None:
        """The tensors alive now, hashed, one ``results`` record per device
        batch, with their names; on any error the trace has none and a
        ``gap`` says so."""
        try:
            for described, names in self._described_live(named=True):
                self.file.results(described, names)
        except Exception as e:
            warnings.warn(
                f"tritontui: the program's results were not recorded ({e!r})",
                RuntimeWarning,
                stacklevel=3,
            )
            self.record_gap("results", repr(e))

    def sample_settings(self) -> None:
        """Samples the numerics flags where they act (a graph call, an op
        they change) and writes a ``settings`` record when they changed:
        a program may switch TF32, say, after recording began."""
        changed = self.numerics.changed() if self.numerics is not None else None
        if changed is not None:
            self.file.settings(changed)

    def record_gap(self, what: str, detail: str) -> None:
        """Writes a ``gap`` record: ``what`` was not recorded, and why.
        A comparison of this trace can then never say the runs agree."""
        # If even that fails, the trace says nothing more; its end record
        # still comes.
        with contextlib.suppress(Exception):
            self.file.gap(what, detail)

    def launch_unrecorded(self, kernel: str, error: BaseException) -> None:
        """A launch of ``kernel`` whose arguments could not be described
        (``error``) runs unrecorded: the trace gets a ``gap`` record in its
        place, so that a comparison says what it did not see, and recording
        goes on. The user hears of the first such launch. Never raises."""
        if not self.said_unrecorded_launch:
            self.said_unrecorded_launch = True
            warnings.warn(
                f"tritontui: a launch of {kernel} could not be recorded ({error!r}); recording "
                "goes on, and the trace marks each launch it lacks",
                RuntimeWarning,
                stacklevel=3,
            )
        try:
            self.file.gap("launch", f"{kernel} ({error!r})")
        except Exception as e:
            # A trace that cannot take even this record stops recording.
            self.fail(e)

    def fail(self, error: BaseException) -> None:
        """Stops recording after an internal error, once, with a warning."""
        with _active.LOCK:
            if self.failed:
                return
            self.failed = True
            if _active.active() is self:
                _active.set_active(None)
        warnings.warn(
            f"tritontui: recording stopped after an internal error: {error!r}; "
            f"the program goes on unrecorded ({self.path} keeps what was recorded)",
            RuntimeWarning,
            stacklevel=3,
        )
        try:
            hooks.uninstall()
            self.close(f"error: {error!r}")
        except Exception:
            pass

    # -- helpers used by the hooks ---------------------------------------

    @property
    def seq(self) -> int:
        """The sequence number the next launch will get."""
        return self.file.next_seq if self.file is not None else self._last_seq

    def now(self) -> int:
        """Nanoseconds since the trace was created (the time of its records)."""
        return self.file.now() if self.file is not None else 0

    def wants(self, name: str) -> bool:
        """Whether kernels of this name are recorded (the ``kernels`` glob)."""
        if self.options.kernels == "*":
            return True
        import fnmatch

        return fnmatch.fnmatchcase(name, self.options.kernels)

    def source_id(self, path: str, lang: str, text: str | None = None) -> int | None:
        """The id of a source file, reading and recording it the first time."""
        key = f"{lang}:{path}" if text is None else f"{lang}:{path}:{hash(text)}"
        found = self._source_ids.get(key)
        if found is not None:
            return found
        if text is None:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
            except OSError:
                return None
        source = self.file.source(path, lang, text)
        self._source_ids[key] = source
        return source

    def kernel_id(self, key: Any, define: Any) -> int:
        """The id of a kernel, defining it with ``define()`` the first time."""
        found = self._kernel_ids.get(key)
        if found is not None:
            return found
        kernel = define()
        kid = self.file.kernel(json.dumps(kernel))
        self._kernel_ids[key] = kid
        self.file.compile("kernel", kernel["name"], dict(kernel.get("config", {})))
        return kid

    def flush(self) -> None:
        """Waits until everything recorded so far is in the file."""
        self.file.flush()

    def before_launch(self, kernel: str) -> None:
        """Pauses here if a pause point names the next launch (hooks call
        this only when ``self.breaks`` is set)."""
        seq = self.seq
        if self.breaks is not None and self.breaks.take(seq, kernel):
            _pause.pause(self, seq, kernel)

    def describe(
        self,
        values: Iterable[Any],
        access: bytes,
        *,
        hash_pre: bool | None = None,
        stream: int | None = None,
        inherit: bool = True,
        launch: bool = False,
        hold: bool = False,
    ) -> Any:
        """Reads a launch's arguments before it runs (see
        ``_native.TraceFile.describe``); hashes them when the session hashes
        inputs, unless ``hash_pre`` says otherwise, or (when ``inherit``)
        the data flow of the graph call running knows their bytes. A
        ``launch``'s arguments are captured into the CUDA graph this
        thread captures, if it does. ``hold``: device hashes wait until the
        description is queued (a graph call's inputs, which may then run
        beside the call)."""
        return self.file.describe(
            values,
            access,
            self.options.hash_inputs if hash_pre is None else hash_pre,
            self.device_hashing,
            stream,
            inherit,
            launch,
            hold,
        )

    def extend(self, described: Any, values: Iterable[Any], access: bytes) -> None:
        """Adds an operation's results to its described arguments."""
        self.file.extend(described, values, access)

    def launch(self, kernel: int, grid: Iterable[int], stream: int, described: Any) -> int:
        """Writes a launch record after the launch; returns its sequence
        number. Device hashes are filled in by the writer thread."""
        seq = self.file.launch(
            described,
            kernel,
            grid,
            stream,
            threading.get_native_id(),
            self.hook_options.after,
        )
        if described.gpu_error:
            self.gpu_failed(described.gpu_error)
        return seq

    def observe_before(self, kernel: str, values: Any, codes: bytes) -> Any:
        """Before the next launch (of ``kernel``, its arguments ``values``
        with access ``codes``): copies what it reads when it is captured,
        and hashes it with the program's own hash function; returns what
        :meth:`observe_after` takes, or None."""
        values, codes = list(values), bytes(codes)
        captured = hashed = None
        if self.capture is not None:
            captured = self.capture.before(self.seq, kernel, values, codes)
        if self.custom_hash is not None:
            hashed = self.custom_hash.before(values, codes)
        if captured is None and hashed is None:
            return None
        return captured, hashed, values, codes

    def observe_after(self, taken: Any, seq: int, results: Any = None) -> None:
        """After launch ``seq`` (``results``: the new tensors an op
        returned): finishes what :meth:`observe_before` began and writes
        its ``capture`` and ``custom_hash`` records."""
        captured, hashed, values, codes = taken
        results = None if results is None else list(results)
        if captured is not None:
            self.file.captured_values(seq, *self.capture.after(captured, seq, results))
        if hashed is not None:
            hashes = self.custom_hash.after(hashed, values, codes, results)
            self.file.custom_hash(seq, self.custom_hash.name, hashes)

    def graph_inputs(
        self,
        graph: str,
        names: list[str],
        inputs: list[Any],
        *,
        all_recorded: bool = True,
        may_keep: Callable[[list[Any], int], bool] | None = None,
    ) -> None:
        """Records the tensors a compiled graph is called with (named by
        ``names``, the graph's input names), hashed now; CUDA tensors of one
        call share one device batch per ``INPUTS_PER_BATCH`` inputs, run beside
        the call's launches where they may (``inputs_beside`` in the native
        module).
        ``all_recorded``: whether every launch the call makes is recorded
        (not for a cpp_wrapper graph), so that its launches may take their
        hashes before from the data flow. ``may_keep(chunk, device)``:
        whether a chunk's hashes may run beside the call, which keeps its
        tensors alive until the call ends (by default they may)."""
        hash_pre = self.options.hash_inputs or self.options.hash_outputs
        for start in range(0, len(inputs), INPUTS_PER_BATCH):
            chunk = inputs[start : start + INPUTS_PER_BATCH]
            described = self.describe(
                chunk, b"i" * len(chunk), hash_pre=hash_pre, inherit=False, hold=True
            )
            keeps = None if may_keep is None else functools.partial(may_keep, chunk)
            self.file.graph_call(graph, names, start, described, all_recorded, keeps)
            if described.gpu_error:
                self.gpu_failed(described.gpu_error)

    def graph_call_end(self) -> None:
        """The graph call whose inputs were recorded last returned."""
        if self.file is not None:
            self.file.graph_call_end()
            error = self.file.take_device_error()
            if error:
                self.gpu_failed(error)

    def gpu_failed(self, error: str) -> None:
        """Hashes CUDA tensors on the host from now on, saying why once."""
        self.device_hashing = False
        _tensors.gpu_failed(error)

    def mark(self, label: str) -> None:
        self.file.marker(str(label), threading.get_native_id())

    def optimizer_step_began(self) -> None:
        """An optimizer's ``step()`` began (it ends in :meth:`step_ended`):
        with only fingerprints recorded, its host reads are let go."""
        host_reads.in_fingerprinted_optimizer_step = self.fingerprints_now

    def step_ended(self, by: str) -> None:
        """Training step ``self.step`` ended (``by`` an optimizer's
        ``step()`` or ``tritontui.step()``; steps are counted by whichever
        ended one first): its state fingerprinted when fingerprints are
        recorded, its ``step`` record written; then the steps recorded in
        full begin (``from_step``), or recording stops after the last
        (``to_step``)."""
        if by == "optimizer":
            host_reads.in_fingerprinted_optimizer_step = False
        if self.file is None or self.failed:
            return
        if self.steps_ended_by is None:
            self.steps_ended_by = by
        elif by != self.steps_ended_by:
            return
        if self.fingerprints_now:
            with _active.dynamo_off():
                _fingerprints.state(self, self.training.tensors())
        self.file.step(self.step, by)
        self.step += 1
        options = self.options
        if options.to_step is not None and self.step > options.to_step:
            stop(f"step {options.to_step} ended (to_step)")
        elif options.from_step is not None and self.step == options.from_step:
            # The window begins: every launch is recorded from here.
            hooks.uninstall()
            self._record_held()
            hooks.install(self)


def _probe_tensor_impl() -> None:
    """Lets the native describer find torch's tensor fields (once; no
    hook is installed yet). Without it arguments are read the slow way."""
    try:
        _native.probe_tensor_impl()
    except Exception as e:
        warnings.warn(
            f"tritontui: reading tensors through their attributes ({e!r})",
            RuntimeWarning,
            stacklevel=4,
        )


def _version() -> str:
    from ._version import __version__

    return __version__


def start(
    path: str | os.PathLike[str],
    options: _options.Options,
    place: dict[str, Any] | None = None,
) -> Session:
    """Starts recording to ``path`` until :func:`stop` (or exit); ``place``
    is where this process runs among ranks, when its launcher says."""
    global _STOPS_AT_EXIT
    with _active.LOCK:
        recording = _active.active()
        if recording is not None:
            raise RuntimeError(f"tritontui is already recording to {recording.path}")
        if not _STOPS_AT_EXIT:
            atexit.register(_stop_at_exit)
            _STOPS_AT_EXIT = True
        session = Session(path, options, place)
        if not session.options.cuda_graphs:
            hooks.disable_cuda_graphs()
        session.open()
        hooks.install(session)
        _active.set_active(session)
        return session


def _stop_at_exit() -> None:
    """Stops recording as the interpreter exits, saying whether the
    program ended by raising (:func:`exit_reason`)."""
    stop(exit_reason())


def exit_reason() -> str:
    """The end record's reason at exit: ``exit``, or :func:`raised_reason`
    where the program ended with an exception it did not catch (Python
    keeps it as ``sys.last_value`` once it has printed it, before exit
    handlers run). An interactive session keeps there the last error it
    printed and went on from, so it always says ``exit``."""
    error = getattr(sys, "last_value", None)
    interactive = hasattr(sys, "ps1") or sys.flags.interactive or "IPython" in sys.modules
    if error is None or interactive:
        return "exit"
    return raised_reason(error, "exit")


def raised_reason(error: BaseException, otherwise: str) -> str:
    """``raised TYPE: MESSAGE`` for recording stopped by ``error`` (its
    message's first line, and the next where the first ends with a colon;
    the whole at most 200 characters; the type with
    its module where it is not a builtin: ``torch.OutOfMemoryError``), or
    ``otherwise`` for ``SystemExit``, which ends a program on purpose
    (and ``GeneratorExit``, a block closed unfinished). An exception whose
    ``str`` fails is named by its type alone."""
    if isinstance(error, SystemExit | GeneratorExit):
        return otherwise
    kind = type(error)
    name = kind.__qualname__
    if kind.__module__ != "builtins":
        name = f"{kind.__module__}.{name}"
    try:
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    except Exception:
        lines = []
    # A first line that only introduces the next (Dynamo's "backend='inductor'
    # raised:") is said with it.
    message = " ".join(lines[:2]) if lines and lines[0].endswith(":") else "".join(lines[:1])
    words = name + (f": {message}" if message else "")
    return "raised " + (words if len(words) <= 200 else words[:199] + "…")


def stop(reason: str = "stopped") -> None:
    """Stops recording and completes the trace."""
    with _active.LOCK:
        session = _active.active()
        _active.set_active(None)
        if session is None:
            return
        hooks.uninstall()
        session.close(reason)

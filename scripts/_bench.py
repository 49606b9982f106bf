"""What the recorder benchmarks share: recording modes measured in turns
beside the unrecorded program, and the statistics of their ratios."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch
import tritontui
from torch.utils._python_dispatch import TorchDispatchMode

# The row beside the recorded modes that times the unrecorded step under
# a dispatch mode doing nothing but run each op.
NOOP_MODE = "no-op dispatch mode (floor of aten ops)"
# The same with Inductor's extern kernels off the mode, as the recorder
# calls them: the floor its own mode meets.
NOOP_MODE_EXTERN_OFF = "no-op mode, extern kernels off it"


class NoopDispatchMode(TorchDispatchMode):
    """A dispatch mode that only runs each op: what torch charges any
    recorder of eager aten ops through a dispatch mode before it does any
    work of its own (the recorder's ``aten=True``), less one Python frame
    per op that its native ``__torch_dispatch__`` does not have."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))

    @classmethod
    def ignore_compile_internals(cls) -> bool:
        # As the recorder's mode: torch.compile compiles as if it were not
        # there. Without this, a compiled function called once under the
        # mode runs eagerly ever after (torch 2.11).
        return True


@contextlib.contextmanager
def extern_kernels_off_the_mode() -> Iterator[None]:
    """Inductor's extern kernels that are torch functions or ops
    (``extern_kernels.mm(a, b, out=buf)``) called with the top dispatch
    mode taken off the stack, as the recorder's native proxies call them
    (``hooks/extern_kernels.py``): the floor of :class:`NoopDispatchMode`
    as the recorder's own mode meets it, which sees no extern kernel.
    These proxies are Python functions, a frame each where the
    recorder's are native."""
    from tritontui.hooks.extern_kernels import _recordable

    module = sys.modules.get("torch._inductor.select_algorithm")
    namespace = module.extern_kernels if module is not None else None
    replaced = []
    for name, original in list(vars(namespace).items()) if namespace is not None else ():
        if _recordable(original):  # the entries the recorder's proxies replace
            replaced.append((name, original))
            setattr(namespace, name, _off_the_mode(original))
    try:
        yield
    finally:
        for name, original in replaced:
            setattr(namespace, name, original)


def _off_the_mode(original: Callable[..., Any]) -> Callable[..., Any]:
    """``original`` called with the top dispatch mode off the stack."""
    pop, push = torch._C._pop_torch_dispatch_stack, torch._C._push_on_torch_dispatch_stack

    def proxy(*args: Any, **kwargs: Any) -> Any:
        if not torch._C._len_torch_dispatch_stack():
            return original(*args, **kwargs)
        mode = pop(None)
        try:
            return original(*args, **kwargs)
        finally:
            push(mode)

    return proxy


def turns_beside_the_floor(
    modes: dict[str, dict], measure: Callable[[], float], rounds: int
) -> dict[str, list[float]]:
    """:func:`take_turns` of the unrecorded step, the same step under a
    :class:`NoopDispatchMode` (row :data:`NOOP_MODE`), under it with the
    extern kernels off it (row :data:`NOOP_MODE_EXTERN_OFF`) and the
    recorded ``modes``, all measured by ``measure``."""

    def floor() -> float:
        with NoopDispatchMode():
            return measure()

    def floor_extern_off() -> float:
        with NoopDispatchMode(), extern_kernels_off_the_mode():
            return measure()

    measures = {label: measure for label in ("unrecorded", *modes)}
    measures[NOOP_MODE] = floor
    measures[NOOP_MODE_EXTERN_OFF] = floor_extern_off
    floors = {NOOP_MODE: None, NOOP_MODE_EXTERN_OFF: None}
    return take_turns({"unrecorded": None, **floors, **modes}, measures, rounds)


def floor_row(times: dict[str, list[float]], ratios: dict[str, list[float]]) -> str:
    """The printed rows of :data:`NOOP_MODE` and
    :data:`NOOP_MODE_EXTERN_OFF`: their times and ratios."""
    return "\n".join(
        f"  {label:40} {statistics.median(times[label]) * 1e3:8.2f} {summary(ratios[label])}"
        for label in (NOOP_MODE, NOOP_MODE_EXTERN_OFF)
    )


def median_interval(values: list[float]) -> tuple[float, float]:
    """A 95% confidence interval for the median of ``values``, from their
    order statistics (no assumption about their distribution)."""
    ordered = sorted(values)
    n = len(ordered)
    half_width = 0.98 * math.sqrt(n)
    low = max(0, math.floor(n / 2 - half_width) - 1)
    high = min(n - 1, math.ceil(n / 2 + 1 + half_width) - 1)
    return ordered[low], ordered[high]


def take_turns(
    modes: dict[str, dict | None],
    measure: Callable[[], float] | dict[str, Callable[[], float]],
    rounds: int,
) -> dict[str, list[float]]:
    """Seconds per step of each mode (None: unrecorded; else the options
    of ``tritontui.record``), ``rounds`` times each, by ``measure`` (or by
    ``measure[mode]``, one per mode). The host's speed drifts from minute
    to minute: the modes take turns, in reverse order every other round,
    so that a steady drift favours none."""
    times: dict[str, list[float]] = {label: [] for label in modes}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.msgpack")
        for round_ in range(rounds):
            order = list(modes.items())
            for label, options in order if round_ % 2 == 0 else order[::-1]:
                once = measure[label] if isinstance(measure, dict) else measure
                if options is None:
                    times[label].append(once())
                    continue
                with recording(path, options):
                    times[label].append(once())
    return times


@contextlib.contextmanager
def recording(path: str, options: dict) -> Iterator[None]:
    """``tritontui.record(path, **options)``, with the environment
    variables in ``options["env"]`` (if any) set while it starts."""
    options = dict(options)
    env = options.pop("env", {})
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        with tritontui.record(path, **options):
            yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def paired_ratios(times: dict[str, list[float]], base: str) -> dict[str, list[float]]:
    """Each mode's per-round ratios to mode ``base`` in the same round."""
    return {
        label: [t / b for t, b in zip(seen, times[base], strict=True)]
        for label, seen in times.items()
    }


def summary(ratios: list[float]) -> str:
    """``1.23x (1.20-1.27x)``: the median ratio and its 95% interval."""
    low, high = median_interval(ratios)
    return f"{statistics.median(ratios):5.2f}x ({low:.2f}-{high:.2f}x)"


def start_stop_cost(device: str, megabytes: int, rounds: int = 5) -> None:
    """What beginning and ending a recording cost with ``megabytes`` of
    parameters alive on ``device`` (one linear layer's weight per 64 MB):
    an empty ``record()`` block's start (the tensors alive then, hashed
    into ``held`` records) and stop (the results, hashed and named),
    beside one ``hash_tensor`` pass over the same bytes; medians of
    ``rounds``, the device drained around each."""
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    layers = torch.nn.ModuleList(
        torch.nn.Linear(4096, 4096, bias=False, device=device) for _ in range(megabytes // 64)
    )
    weights = [layer.weight for layer in layers]
    starts, stops, passes = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            sync()
            t0 = time.perf_counter()
            tritontui.start(f"{tmp}/t.msgpack")
            sync()
            t1 = time.perf_counter()
            tritontui.stop()
            sync()
            t2 = time.perf_counter()
            for w in weights:
                tritontui.hash_tensor(w)
            sync()
            t3 = time.perf_counter()
            starts.append(t1 - t0)
            stops.append(t2 - t1)
            passes.append(t3 - t2)

    def ms(values: list[float]) -> str:
        return f"{statistics.median(values) * 1e3:8.2f} ms"

    print(f"\nan empty record() block with {megabytes} MB of parameters alive ({device}):")
    print(f"  start (held tensors hashed):       {ms(starts)}")
    print(f"  stop (results hashed and named):   {ms(stops)}")
    print(f"  hash_tensor over the same bytes:   {ms(passes)}")


def capture_cost(numel: int, steps: int, device: str) -> None:
    """What capturing values adds: a compiled pointwise kernel on
    ``device`` recorded with the defaults, with and without every launch
    captured (stop included: it waits for the sidecar files), per
    captured MB."""
    x = torch.randn(numel, device=device)
    f = torch.compile(lambda x: (x * 1.5 + 1).relu())
    f(x)
    kernels = "triton_*" if device == "cuda" else "cpp_*"
    with tempfile.TemporaryDirectory() as tmp:

        def recorded(**options) -> float:
            path = os.path.join(tmp, "t.msgpack")
            shutil.rmtree(path + ".values", ignore_errors=True)
            start = time.perf_counter()
            with tritontui.record(path, **options):
                for _ in range(steps):
                    f(x)
            return time.perf_counter() - start

        plain = min(recorded() for _ in range(3))
        captured = min(recorded(capture=kernels) for _ in range(3))
        folder = Path(tmp) / "t.msgpack.values"
        mb = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
    added = captured - plain
    print(
        f"\ncapture on {device}, compiled pointwise kernel on {numel} floats, {steps} calls,"
        f" every launch: {mb:.0f} MB captured in {added * 1e3:.0f} ms more than recording"
        f" without ({added / mb * 1e3:.2f} ms per MB, {mb / added / 1e3:.2f} GB/s)"
    )


# The modes of the launch-cost benchmark, as issue 34 measured them.
LAUNCH_MODES = {
    "unrecorded": None,
    "defaults, metadata only (hash='none')": {"hash": "none"},
    "metadata only, aten=False": {"hash": "none", "aten": False},
    "defaults (exact hashes)": {},
    "exact hashes, aten=False": {"aten": False},
}


def _sorted_chain(x: torch.Tensor) -> torch.Tensor:
    """Eight pointwise kernels, each followed by ``torch.sort`` (an extern
    fallback Inductor cannot fuse across)."""
    for _ in range(8):
        x = torch.sort(x * 1.5 + 1).values
    return x


def _tiny_programs() -> dict[str, Callable[..., Any]]:
    """The launch-cost benchmark's programs, compiled: one pointwise
    kernel, and eight split by ``torch.sort``."""
    return {
        "one kernel": torch.compile(lambda x: x * 2 + 1),
        "8 kernels split by sort": torch.compile(_sorted_chain),
    }


def _seconds_per_call(program: Callable[..., Any], x: torch.Tensor, calls: int) -> float:
    """Wall seconds per call of ``program(x)`` over ``calls`` calls (the
    device's queue drained before and after)."""
    cuda = x.is_cuda
    if cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        program(x)
    if cuda:
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / calls


def launch_cost(device: str, calls: int, rounds: int) -> None:
    """What recording adds per call and per recorded launch to tiny
    compiled calls on ``device``: one pointwise kernel (and its output's
    allocation) per call, and a chain of eight split by extern fallbacks.
    The modes take turns (:func:`take_turns`); each time is the median
    over ``rounds`` of ``calls`` calls; the launches a call records are
    counted from one more recorded call per mode."""
    x = torch.randn(4096, device=device)
    for name, program in _tiny_programs().items():
        program(x)
        times = take_turns(
            LAUNCH_MODES, lambda program=program: _seconds_per_call(program, x, calls), rounds
        )
        plain = statistics.median(times["unrecorded"])
        print(f"\nlaunch cost on {device}, {name}, 4096 floats ({rounds} rounds of {calls} calls):")
        print(f"  {'':38} {'per call':>10} {'added':>10} {'launches':>9} {'per launch':>11}")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "t.msgpack")
            for label, options in LAUNCH_MODES.items():
                each = statistics.median(times[label])
                if options is None:
                    print(f"  {label:38} {each * 1e6:7.1f} us")
                    continue
                with recording(path, options):
                    program(x)
                records = dumped(path)
                launches = sum(1 for r in records if r["type"] == "launch" and not r["autotune"])
                added = (each - plain) * 1e6
                print(
                    f"  {label:38} {each * 1e6:7.1f} us {added:7.1f} us {launches:9}"
                    f" {added / max(launches, 1):8.1f} us"
                )


@contextlib.contextmanager
def _without(owner: Any, name: str, value: Any) -> Iterator[None]:
    """``owner.name`` set to ``value`` inside the block."""
    saved = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, saved)


def _knockouts(device: str) -> dict[str, Callable[[], contextlib.ExitStack]]:
    """The recorder's pieces a compiled call passes through, each as what
    puts back the unrecorded original: the graph-call hook, the launch
    hooks (Triton's ``run``; the C++ kernels' proxies), the wrapper's
    allocation proxies. Each entry takes away its piece and those above."""
    from torch._inductor.output_code import CompiledFxGraph
    from tritontui.hooks import cpp, graph_inputs, triton, wrapper_allocations

    def stack(pieces: list[tuple[Any, str, Any]]) -> contextlib.ExitStack:
        exits = contextlib.ExitStack()
        for owner, name, value in pieces:
            exits.enter_context(_without(owner, name, value))
        return exits

    graph = [(CompiledFxGraph, "__call__", graph_inputs._ORIGINAL)]
    launches = [
        (m, n, original) for m, n, original in cpp._PATCHED if n not in wrapper_allocations.NAMES
    ]
    if device == "cuda":
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner

        launches.append((CachingAutotuner, "run", triton._ORIGINAL))
    allocations = [(m, n, o) for m, n, o in cpp._PATCHED if n in wrapper_allocations.NAMES]
    return {
        "graph-call hook": lambda: stack(graph),
        "launch hook": lambda: stack(graph + launches),
        "allocation proxy": lambda: stack(graph + launches + allocations),
    }


def launch_pieces(device: str, calls: int, rounds: int, options: dict) -> None:
    """Where the time that recording with ``options`` (aten ops off: this
    measures the hooks of a compiled graph) adds to a call of one compiled
    pointwise kernel on ``device`` goes:
    the recorder's pieces are taken away one after another inside the
    session (:func:`_knockouts`), each piece's cost being what taking it
    away saves; the rest is what the session costs with none of them
    (its mode off the stack, the checks of who records). Every measure
    is the median over ``rounds`` of ``calls`` calls, all taking turns."""
    x = torch.randn(4096, device=device)
    program = _tiny_programs()["one kernel"]
    program(x)
    times: dict[str, list[float]] = {"unrecorded": [], "recorded": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            times["unrecorded"].append(_seconds_per_call(program, x, calls))
            with tritontui.record(os.path.join(tmp, "t.msgpack"), aten=False, **options):
                program(x)
                times["recorded"].append(_seconds_per_call(program, x, calls))
                for label, knockout in _knockouts(device).items():
                    with knockout():
                        times.setdefault(label, []).append(_seconds_per_call(program, x, calls))
    medians = {label: statistics.median(seen) for label, seen in times.items()}
    print(
        f"\nwhere recording adds time to a compiled call on {device} (one kernel,"
        f" aten=False, {options}; {rounds} rounds of {calls} calls):"
    )
    print(
        f"  unrecorded {medians['unrecorded'] * 1e6:.1f} us, recorded"
        f" {medians['recorded'] * 1e6:.1f} us per call"
    )
    last = medians["recorded"]
    for label in list(medians)[2:]:
        print(f"    {label:20} {(last - medians[label]) * 1e6:6.1f} us")
        last = medians[label]
    print(f"    {'the rest':20} {(last - medians['unrecorded']) * 1e6:6.1f} us")


def launch_phases(device: str, calls: int) -> None:
    """The recorder's phase timers (``_native.time_phases``: wall time
    summed natively per phase, nested phases inside their hook's) over
    ``calls`` recorded calls of each program of :func:`launch_cost`, with
    metadata only and with the defaults: microseconds per call in each
    phase, and how often it was entered per call. What the hooks' phases
    leave of the time added per call is Python (the graph-call hook, the
    session's helpers) and torch's own dispatch-mode machinery."""
    from tritontui import _native

    x = torch.randn(4096, device=device)
    for name, program in _tiny_programs().items():
        program(x)
        plain = min(_seconds_per_call(program, x, calls) for _ in range(3))
        for label, options in (("metadata only", {"hash": "none"}), ("defaults", {})):
            with (
                tempfile.TemporaryDirectory() as tmp,
                tritontui.record(os.path.join(tmp, "t.msgpack"), **options),
            ):
                program(x)
                _native.time_phases(True)
                each = _seconds_per_call(program, x, calls)
                phases = _native.phase_times()
                _native.time_phases(False)
            print(
                f"\nphases on {device}, {name}, {label}: {each * 1e6:.1f} us per call,"
                f" {(each - plain) * 1e6:.1f} us added ({calls} calls)"
            )
            for phase, nanos, count in phases:
                if count:
                    print(f"  {phase:20} {nanos / calls / 1e3:7.2f} us {count / calls:6.1f}x")


# Phases that hold the program's own call, beside the hook holding them.
_OWN_CALLS = {
    "triton hook": "triton run",
    "c++ kernel hook": "c++ kernel run",
    "aten hook": "aten run",
    "allocation hook": "allocation run",
}
# Phases no hook holds: the graph-call hook's native calls.
_UNHELD = ("graph call record", "graph call end")


def step_phases(step: Callable[[], None], sync: Callable[[], None], steps: int) -> None:
    """Where a recorded step's host time goes: the host's time per call of
    ``step`` (``sync`` drains the device before and after each, so that
    the time is the host's, not the device's; median of ``steps``)
    unrecorded, under the two floors of :func:`turns_beside_the_floor`
    (what a Python dispatch mode alone costs: the aten recorder's fallback
    where the native observer does not load), and recorded with metadata
    only, with the defaults and with fingerprints alone, with the
    recorder's phase timers (``_native.time_phases``) per step. The hooks'
    own work is each hook's phase less the program's call inside it, plus
    the graph call's record and end; what the added time leaves beyond
    that own work is the rest: the graph-call hook's Python (its numerics
    sample and its inputs' describe, which the timers count without
    telling them from the hooks', and the fingerprints), the extern
    kernels' proxies outside the aten hook, and whatever else torch does
    differently while recording."""
    from tritontui import _native

    def host_seconds() -> float:
        step()
        seen = []
        for _ in range(steps):
            sync()
            start = time.perf_counter()
            step()
            seen.append(time.perf_counter() - start)
        sync()
        return statistics.median(seen)

    plain = host_seconds()
    with NoopDispatchMode():
        floor = host_seconds()
    with NoopDispatchMode(), extern_kernels_off_the_mode():
        floor_extern_off = host_seconds()
    print(
        f"  host time a step: unrecorded {plain * 1e3:.2f} ms; {NOOP_MODE}"
        f" +{(floor - plain) * 1e3:.2f} ms; {NOOP_MODE_EXTERN_OFF}"
        f" +{(floor_extern_off - plain) * 1e3:.2f} ms ({steps} steps each)"
    )
    for label, options in (
        ("metadata only", {"hash": "none"}),
        ("defaults", {}),
        ("fingerprints", {"fingerprint": True}),
    ):
        with (
            tempfile.TemporaryDirectory() as tmp,
            tritontui.record(os.path.join(tmp, "t.msgpack"), **options),
        ):
            step()
            _native.time_phases(True)
            each = host_seconds()
            phases = _native.phase_times()
            _native.time_phases(False)
        calls = steps + 1  # host_seconds' warm-up call too
        per_step = {phase: (nanos / calls / 1e3, count / calls) for phase, nanos, count in phases}
        own = sum(per_step[hook][0] - per_step[run][0] for hook, run in _OWN_CALLS.items())
        own += sum(per_step[phase][0] for phase in _UNHELD)
        added = (each - plain) * 1e6
        print(
            f"  {label}: {each * 1e3:.2f} ms a step, +{added:.0f} us: the hooks' own work"
            f" {own:.0f} us, the rest {added - own:.0f} us"
        )
        for phase, (micros, count) in per_step.items():
            if count:
                print(f"    {phase:20} {micros:9.1f} us {count:7.1f}x")


def own_forward(model: torch.nn.Module, label: str) -> Callable[..., Any]:
    """``lambda *args: model(*args)`` with a code object of its own
    (``label`` names it). Dynamo keeps compiled graphs per code object:
    two models of one structure compiled with ``torch.compile(model)``
    share the first one's graphs, so a step compiled with the recorder's
    C++-wrapper hooks after a stock one would run the stock graphs."""
    code = compile("lambda *args: model(*args)", f"<{label} forward>", "eval")
    return eval(code, {"model": model})


# The modes of the C++-wrapper benchmark: the stock wrapper unrecorded
# (the base), the hooked one unrecorded (what the hooks cost nobody
# records), and the hooked one recorded with the defaults.
CPP_WRAPPER_MODES = {
    "stock wrapper, unrecorded": None,
    "hooked wrapper, unrecorded": None,
    "defaults, metadata only (hash='none')": {"hash": "none"},
    "defaults (exact hashes in+out)": {},
}


def dumped(path: str) -> list[dict]:
    """The records of a trace, through ``tritontui dump``."""
    binary = os.environ.get("TRITONTUI_BIN")
    command = [binary] if binary else [sys.executable, "-m", "tritontui"]
    out = subprocess.run(
        [*command, "dump", path], capture_output=True, text=True, check=True
    ).stdout
    return [json.loads(line) for line in out.splitlines()]


def unseen_count(path: str) -> str:
    """``N launches, M unrecorded``: a trace's launches, and its gaps and
    graphs run unrecorded (a step whose graphs were not hooked has some)."""
    records = dumped(path)
    unseen = [r for r in records if r["type"] == "gap" or "unrecorded" in r.get("info", {})]
    launches = sum(1 for r in records if r["type"] == "launch")
    return f"{launches} launches, {len(unseen)} unrecorded"


def cpp_wrapper_turns(build: Callable[[bool], Callable[[], float]], rounds: int) -> None:
    """Times a step compiled with ``cpp_wrapper=True``: ``build(hooked)``
    compiles it (with the recorder's hooks or stock) and returns what
    measures it (seconds per step). The modes take turns
    (:func:`take_turns`); then one measure of each recorded mode is
    recorded again and its trace counted."""
    from torch._inductor import config
    from tritontui.hooks import cpp_wrapper

    with config.patch(cpp_wrapper=True):
        stock = build(False)
        with cpp_wrapper.codegen_hooks():
            hooked = build(True)
    measures = {
        label: stock if label.startswith("stock") else hooked for label in CPP_WRAPPER_MODES
    }
    times = take_turns(CPP_WRAPPER_MODES, measures, rounds)
    counts: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.msgpack")
        for label, options in CPP_WRAPPER_MODES.items():
            if options is not None:
                with recording(path, options):
                    hooked()
                counts[label] = unseen_count(path)
    ratios = paired_ratios(times, "stock wrapper, unrecorded")
    print(f"  {'':40} {'ms':>8} {'ratio (95% interval)':>21}  one recorded measure")
    for label in CPP_WRAPPER_MODES:
        median = statistics.median(times[label])
        print(f"  {label:40} {median * 1e3:8.2f} {summary(ratios[label])}  {counts.get(label, '')}")

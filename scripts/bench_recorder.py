"""Benchmark of the recorder on the CPU, side by side in one process: what
recording adds per recorded launch of tiny compiled calls, modes taking
turns (``_bench.launch_cost``), and the recorder's phase timers over
them (``_bench.launch_phases``); CPU hash throughput (tthash64-v1 on 256
MB, contiguous and strided, and on the strided arguments of a GPT
step's aten ops); the time a compiled kernel launch costs
unrecorded, recorded with the default options (aten ops around the
kernels, exact hashes before and after), and with aten ops off, with
metadata only or exact hashes; where the time a recorded call adds goes,
piece by piece (``launch_breakdown``); a small compiled GPT's training
step (AdamW) on two threads in the same modes, taking turns, with the
time added per recorded launch, beside the unrecorded step under a
dispatch mode that only runs each op (the floor of recording aten ops
through a dispatch mode; and the same with Inductor's extern kernels off
it, as the recorder calls them), then where a recorded step's host time
goes (``_bench.step_phases``); and its forward and backward compiled
with ``cpp_wrapper=True``: the stock C++ wrapper, the one with the
recorder's hooks unrecorded and recorded (``_bench.cpp_wrapper_turns``);
what an empty ``record()`` block's start and stop cost with 512 MB of
parameters alive (``_bench.start_stop_cost``); and what naming each
generated kernel's call site by its modules adds to a compile
(``compile_sites``).

    .venv/bin/python scripts/bench_recorder.py
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.utils._pytree as pytree
import tritontui
from _bench import (
    capture_cost,
    cpp_wrapper_turns,
    floor_row,
    launch_cost,
    launch_phases,
    own_forward,
    paired_ratios,
    recording,
    start_stop_cost,
    step_phases,
    summary,
    turns_beside_the_floor,
)
from torch.utils._python_dispatch import TorchDispatchMode

# The corpus's small GPT (tests/corpus/programs/_gpt.py).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests/corpus/programs"))
from _gpt import GPT, T

# The recorded modes, defaults first: what a user gets.
MODES = {
    "defaults (aten ops, hashes)": {},
    "defaults, metadata only": {"hash": "none"},
    "fingerprints only (fingerprint=True)": {"fingerprint": True},
    "aten ops by the mode (no native observer)": {"env": {"TRITONTUI_ATEN_OBSERVER": "0"}},
    "the mode, metadata only": {"hash": "none", "env": {"TRITONTUI_ATEN_OBSERVER": "0"}},
    "aten off, exact hashes": {"aten": False},
    "aten off, metadata only": {"aten": False, "hash": "none"},
    "defaults + samples (two programs' numerics)": {"samples": True},
    "defaults + rows (batch invariance)": {"rows": True},
}
ROUNDS = 15


def best_of(runs: int, fn) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def hash_throughput() -> None:
    big = torch.randn(64 << 20)  # 256 MB of float32
    seconds = best_of(5, lambda: tritontui.hash_tensor(big))
    print(f"hash, contiguous 256 MB:   {big.nbytes / seconds / 1e9:6.2f} GB/s (one core)")
    strided = big.view(8192, 8192).t()
    seconds = best_of(3, lambda: tritontui.hash_tensor(strided))
    print(f"hash, transposed 256 MB:   {big.nbytes / seconds / 1e9:6.2f} GB/s (one core)")
    # Views a training step hashes in cache: a Linear's weight read
    # transposed in its backward, heads split off a fused projection.
    for label, view in (
        ("transposed 1 MB:          ", torch.randn(128, 2048).t()),
        (
            "heads of a projection:    ",
            torch.randn(8, 16, 96)[..., :32].view(8, 16, 2, 16).transpose(1, 2),
        ),
    ):
        seconds = best_of(200, lambda view=view: tritontui.hash_tensor(view))
        nbytes = view.numel() * view.element_size()
        print(f"hash, {label}{nbytes / seconds / 1e9:6.2f} GB/s (one core, in cache)")
    strided_views_of_a_step()


class _StridedArguments(TorchDispatchMode):
    """Keeps every tensor argument of the ops it sees that is not
    contiguous."""

    def __init__(self) -> None:
        super().__init__()
        self.views: list[torch.Tensor] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        for value in pytree.tree_leaves((args, kwargs or {})):
            if isinstance(value, torch.Tensor) and not value.is_contiguous():
                self.views.append(value)
        return func(*args, **(kwargs or {}))


def strided_views_of_a_step() -> None:
    """The strided tensor arguments of one :func:`gpt_training_step`'s
    aten ops (the matmuls' transposed weights and activations, attention's
    heads), each hashed once by the recorder's host hash
    (``_native.hash_host``, its arguments made beforehand): median of 50."""
    from tritontui import _native

    step = gpt_training_step()
    with _StridedArguments() as mode:
        step()
    views = [
        (view.data_ptr(), view.element_size(), list(view.shape), list(view.stride()))
        for view in mode.views
    ]

    def seconds() -> float:
        start = time.perf_counter()
        for view in views:
            _native.hash_host(*view)
        return time.perf_counter() - start

    taken = statistics.median(seconds() for _ in range(50))
    nbytes = sum(view.numel() * view.element_size() for view in mode.views)
    print(
        f"hash, a GPT step's {len(views)} strided arguments ({nbytes / 1e6:.2f} MB):"
        f" {taken * 1e6:.0f} us, {nbytes / taken / 1e9:.2f} GB/s (one core, in cache)"
    )


def launch_overhead(numel: int, steps: int) -> None:
    x = torch.randn(numel)
    f = torch.compile(lambda x: (x * 1.5 + 1).relu())
    f(x)

    def loop() -> None:
        for _ in range(steps):
            f(x)

    plain = best_of(3, loop)
    rows = [("unrecorded", plain, None)]
    with tempfile.TemporaryDirectory() as tmp:
        for label, options in [
            ("defaults (aten ops, hashes)", {}),
            ("aten off, metadata only", {"aten": False, "hash": "none"}),
            ("aten off, exact hashes", {"aten": False, "hash": "both"}),
        ]:
            path = os.path.join(tmp, "t.msgpack")
            with tritontui.record(path, **options):
                seconds = best_of(3, loop)
            rows.append((label, seconds, options))
    per_step = plain / steps
    print(
        f"\ncompiled pointwise kernel on {numel} floats, {steps} calls "
        "(1 kernel and 1 buffer allocation per call):"
    )
    print(f"  {'':28} {'per launch':>12} {'overhead':>12} {'ratio':>7}")
    for label, seconds, _ in rows:
        each = seconds / steps
        overhead = (each - per_step) * 1e6
        print(f"  {label:28} {each * 1e6:9.1f} us {overhead:9.1f} us {seconds / plain:6.2f}x")


def _captured_calls(module, names, call):
    """``call()``'s arguments to each global of ``module`` in ``names``
    (the proxies the recorder installed), captured on one call."""
    captured = {}
    originals = {name: getattr(module, name) for name in names}

    def capture(name):
        def record(*args):
            captured[name] = args
            return originals[name](*args)

        return record

    for name in names:
        setattr(module, name, capture(name))
    try:
        call()
    finally:
        for name, original in originals.items():
            setattr(module, name, original)
    return captured


def _per_call(fn, calls: int, rounds: int = 7) -> float:
    """Median seconds per call of ``fn`` over ``rounds`` rounds."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def eager_op_cost(calls: int = 3000) -> None:
    """What one eager op costs to record, through the native observer and
    through the dispatch mode (``TRITONTUI_ATEN_OBSERVER=0``): an in-place
    ``add_`` on 1024 floats (recorded) and a view (``x.view(-1)``, not
    recorded); microseconds added per op beside the unrecorded op, medians
    of 7 rounds of ``calls`` ops, each way in the same process."""
    x = torch.randn(1024)
    ops = {"add_ (recorded)": lambda: x.add_(1.0), "view (not recorded)": lambda: x.view(-1)}
    plain = {label: _per_call(op, calls) for label, op in ops.items()}
    print(f"\nan eager op recorded ({calls} ops a round; us added per op):")
    print(f"  {'':44} " + " ".join(f"{label:>20}" for label in ops))
    row = " ".join(f"{t * 1e6:20.2f}" for t in plain.values())
    print(f"  {'unrecorded (us per op)':44} {row}")
    for label, options in {
        "observer, defaults": {},
        "observer, metadata only": {"hash": "none"},
        "dispatch mode, defaults": {"env": {"TRITONTUI_ATEN_OBSERVER": "0"}},
        "dispatch mode, metadata only": {"hash": "none", "env": {"TRITONTUI_ATEN_OBSERVER": "0"}},
    }.items():
        with (
            tempfile.TemporaryDirectory() as tmp,
            recording(os.path.join(tmp, "t.msgpack"), options),
        ):
            added = [_per_call(op, calls) - plain[name] for name, op in ops.items()]
        print(f"  {label:44} " + " ".join(f"{t * 1e6:20.2f}" for t in added))


def launch_breakdown(calls: int = 3000) -> None:
    """Where the time a recorded call of a compiled pointwise kernel adds
    goes: each piece of the recorder the call passes through, timed alone
    inside the same session (median of 7 rounds of ``calls`` calls): the
    graph call's settings sample, its inputs and end, the C++ kernel's
    proxy against the kernel itself, the buffer allocation's proxy
    against the allocator; the rest is the graph hook's own Python."""
    x = torch.randn(1024)
    f = torch.compile(lambda x: (x * 1.5 + 1).relu())
    f(x)
    plain = _per_call(lambda: f(x), calls)
    print(
        "\nwhere a recorded call of a compiled pointwise kernel spends"
        f" (1024 floats, {calls} calls; unrecorded {plain * 1e6:.1f} us):"
    )
    for label, options in (("defaults", {}), ("metadata only", {"hash": "none"})):
        with (
            tempfile.TemporaryDirectory() as tmp,
            tritontui.record(os.path.join(tmp, "t.msgpack"), **options),
        ):
            f(x)
            whole = _per_call(lambda: f(x), calls) - plain
            pieces = _recorder_pieces(lambda: f(x), x, calls)
        print(f"  {label}: {whole * 1e6:6.1f} us added per call")
        rest = {"the rest (the graph hook's Python)": whole - sum(pieces.values())}
        for name, seconds in {**pieces, **rest}.items():
            print(f"    {name:36} {seconds * 1e6:6.1f} us")


def _recorder_pieces(call, x: torch.Tensor, calls: int) -> dict[str, float]:
    """Seconds per call of each piece of the recorder that ``call`` (one
    call of the compiled pointwise graph of ``x``, recording now) passes
    through; see :func:`launch_breakdown`."""
    from torch._inductor.codecache import PyCodeCache
    from tritontui import _native
    from tritontui.hooks import cpp as cpp_hook

    session = tritontui._active.active()
    module = next(
        m
        for m in list(PyCodeCache.modules)
        if any(isinstance(v, _native.CppKernelHook) for v in vars(m).values())
    )
    kernel = next(n for n, v in vars(module).items() if isinstance(v, _native.CppKernelHook))
    proxy, allocate = getattr(module, kernel), module.empty_strided_cpu
    unwrapped = next(o for m, n, o in cpp_hook._PATCHED if m is module and n == "empty_strided_cpu")
    args = _captured_calls(module, (kernel, "empty_strided_cpu"), call)
    launch, buffer = args[kernel], args["empty_strided_cpu"]

    def graph_inputs() -> None:
        session.graph_inputs("g", ["arg0_1"], [x])
        session.graph_call_end()

    return {
        "settings sample": _per_call(session.sample_settings, calls),
        "graph inputs and end": _per_call(graph_inputs, calls),
        "C++ kernel proxy": _per_call(lambda: proxy(*launch), calls)
        - _per_call(lambda: proxy.kernel(*launch), calls),
        "allocation proxy": _per_call(lambda: allocate(*buffer), calls)
        - _per_call(lambda: unwrapped(*buffer), calls),
    }


def gpt_training_step() -> Callable[[], None]:
    """One training step of the corpus's small GPT (vocabulary 2,048,
    batch 8 x 16 tokens), compiled, with an eager AdamW step, compiled and
    warmed up: most of its recorded launches are the optimizer's aten ops."""
    torch.manual_seed(0)
    vocab = 2048
    model = GPT(vocab)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    compiled = torch.compile(model)
    data = torch.randint(0, vocab, (8, T + 1))

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        logits = compiled(data[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), data[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()

    for _ in range(3):
        step()
    return step


def gpt_step() -> None:
    """:func:`gpt_training_step` in every mode, taking turns."""
    step = gpt_training_step()

    def measure(steps: int = 10) -> float:
        # The first step of a session defines its kernels: not timed.
        step()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        return (time.perf_counter() - start) / steps

    times = turns_beside_the_floor(MODES, measure, ROUNDS)
    # Counted after the turns: a step that no longer ran compiled after
    # one of them would show it.
    launches = {}
    for label, options in MODES.items():
        with recording(os.path.join(tempfile.gettempdir(), "bench.msgpack"), options):
            step()
            first = tritontui._active.active().seq
            step()
            launches[label] = tritontui._active.active().seq - first
    ratios = paired_ratios(times, "unrecorded")
    plain = statistics.median(times["unrecorded"])
    print(
        f"\nsmall GPT training step (compiled, eager AdamW), {torch.get_num_threads()} threads,"
        f" unrecorded {plain * 1e3:.2f} ms; {ROUNDS} rounds of 10 steps taking turns:"
    )
    print(f"  {'':40} {'ms':>8} {'ratio (95% interval)':>21} {'launches':>9} {'us/launch':>10}")
    for label in MODES:
        each = statistics.median(times[label])
        print(
            f"  {label:40} {each * 1e3:8.2f} {summary(ratios[label])} {launches[label]:9d}"
            f" {(each - plain) / launches[label] * 1e6:10.1f}"
        )
    print(floor_row(times, ratios))
    print("  where a step's host time goes (_bench.step_phases):")
    step_phases(step, lambda: None, 30)


def compile_sites(rounds: int = 4) -> None:
    """What naming each generated kernel's call site by its modules
    (``hooks/kernel_sites``) adds to a compile: the small GPT's forward and
    backward compiled while recording, into a fresh Inductor cache each
    time, with the hook and with it left out, taking turns (the first
    compile, which builds the C++ kernels kept in memory after, is not
    counted)."""
    from tritontui.hooks import kernel_sites

    torch.manual_seed(0)
    vocab = 2048
    model = GPT(vocab)
    data = torch.randint(0, vocab, (8, T + 1))
    install = kernel_sites.install

    def compile_once(with_sites: bool) -> float:
        torch._dynamo.reset()
        kernel_sites.install = install if with_sites else lambda: None
        try:
            with tempfile.TemporaryDirectory() as cache:
                os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
                start = time.perf_counter()
                with tritontui.record(os.path.join(cache, "t.msgpack")):
                    torch.compile(model)(data[:, :-1]).sum().backward()
                return time.perf_counter() - start
        finally:
            kernel_sites.install = install

    saved = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    try:
        compile_once(True)
        times: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(rounds):
            for with_sites in (True, False):
                times[with_sites].append(compile_once(with_sites))
    finally:
        if saved is None:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = saved
    ratios = [a / b for a, b in zip(times[True], times[False], strict=True)]
    print(
        f"\nsmall GPT forward and backward compiled while recording, fresh cache, {rounds} turns:"
        f" with kernel sites {statistics.median(times[True]):.2f} s,"
        f" without {statistics.median(times[False]):.2f} s,"
        f" ratio {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})"
    )


def gpt_cpp_wrapper() -> None:
    """The small GPT's forward and backward compiled with ``cpp_wrapper``."""
    vocab = 2048
    data = torch.randint(0, vocab, (8, T + 1))

    def build(hooked: bool):
        torch.manual_seed(0)
        model = GPT(vocab)
        compiled = torch.compile(own_forward(model, "hooked" if hooked else "stock"))

        def step() -> None:
            logits = compiled(data[:, :-1])
            loss = torch.nn.functional.cross_entropy(
                logits.reshape(-1, vocab), data[:, 1:].reshape(-1)
            )
            loss.backward()

        for _ in range(3):
            step()
        return lambda: best_of(1, lambda: [step() for _ in range(10)]) / 10

    print(f"\nsmall GPT forward and backward with cpp_wrapper=True, {ROUNDS} rounds of 10 steps:")
    cpp_wrapper_turns(build, ROUNDS)


if __name__ == "__main__":
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, {os.cpu_count()} cores")
    launch_cost("cpu", 1000, 7)
    launch_phases("cpu", 2000)
    hash_throughput()
    launch_overhead(1024, 2000)
    launch_breakdown()
    eager_op_cost()
    launch_overhead(1 << 20, 200)
    capture_cost(1 << 20, 50, "cpu")
    start_stop_cost("cpu", 512)
    torch.set_num_threads(2)
    gpt_step()
    gpt_cpp_wrapper()
    compile_sites()

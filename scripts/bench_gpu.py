"""GPU benchmark, side by side in one process (needs CUDA):

0. What recording adds per recorded launch of tiny compiled calls (one
   pointwise kernel; eight split by ``torch.sort``), modes taking turns
   (``_bench.launch_cost``), and where it goes (``_bench.launch_pieces``,
   ``_bench.launch_phases``).
1. tthash64-v1 on a 256 MB tensor, beside a device-to-device copy and
   DebugMode's L1-norm hash of the same tensor.
2. A compiled 4-layer transformer (d=1024, 16 heads, batch 8 x 512 tokens),
   forward and backward, in bf16 then fp32: step time unrecorded, recorded
   with the default options (aten ops recorded; exact hashes before and
   after every launch, or metadata only; with device hashes enqueued
   launch by launch instead of deferred; with Inductor's extern kernels
   recorded through the dispatch mode instead of their native proxies)
   and with aten ops off (taking
   turns for ROUNDS rounds; each recorded mode's ratio is the median of its
   per-round ratios to the unrecorded step measured beside it), with the
   time added per recorded launch and per hash; beside them the
   unrecorded step under a dispatch mode that only runs each op (what
   torch charges any recording of aten ops through a dispatch mode; and
   with Inductor's extern kernels off it, as the recorder calls them),
   where a recorded step's host time goes (``_bench.step_phases``), and
   the step under DebugMode with and without tensor hashes.
3. The same transformer's forward (inference) compiled with
   ``mode="reduce-overhead"`` (CUDA graph trees), in bf16 then fp32: step
   time unrecorded and recorded with the defaults, metadata only and
   exact hashes (graphs stay on: each capture's hashes run inside the
   graph, each replay is one record and one copy), modes taking turns,
   every turn capturing its graphs afresh; with the launches and replays
   per step, the bytes the exact hashes read per step and the ratio that
   traffic alone implies at the device's measured read bandwidth.
4. What capturing values (``record(capture=...)``) adds per captured MB,
   and what starting and stopping a recording cost with 4 GB of
   parameters alive (``_bench.start_stop_cost``).
5. The same transformer step compiled with ``cpp_wrapper=True``, in bf16
   then fp32: the stock C++ wrapper unrecorded, the wrapper compiled with
   the recorder's hooks run unrecorded (what the hooks cost when nobody
   records), and recorded with the defaults, metadata only and exact
   hashes, taking turns (``_bench.cpp_wrapper_turns``).
6. An eager AdamW step (foreach, the default on a GPU) over the same
   transformer's fp32 parameters (50 M): unrecorded, recorded with the
   defaults (hashes before an op taken from the data flow inside the
   step), with every input hashed (``TRITONTUI_HASH_EVERY_INPUT=1``, as
   before optimizer steps inherited) and metadata only, taking turns;
   with the hashes computed and inherited, the bytes hashed and the hash
   table launches per step.

    python scripts/bench_gpu.py [SECTION ...]   # ROUNDS=30 by default
    (sections: launch, hash, transformer, graphed, capture, cpp_wrapper,
    optimizer; all by default)
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
import tritontui
from _bench import (
    capture_cost,
    cpp_wrapper_turns,
    dumped,
    floor_row,
    launch_cost,
    launch_phases,
    launch_pieces,
    own_forward,
    paired_ratios,
    recording,
    start_stop_cost,
    step_phases,
    summary,
    take_turns,
    turns_beside_the_floor,
)
from tritontui import _native

# Turns each recording mode takes in the transformer benchmark: enough
# that the median of the per-round ratios is known to a few hundredths on
# a host whose speed halves and doubles from one second to the next.
ROUNDS = int(os.environ.get("ROUNDS", "30"))


def cuda_time(fn, repeat: int) -> float:
    """Seconds per call, measured with CUDA events after a warm-up."""
    fn()
    torch.cuda.synchronize()
    start, end = (
        torch.cuda.Event(enable_timing=True),
        torch.cuda.Event(enable_timing=True),
    )
    start.record()
    for _ in range(repeat):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / repeat


def hash_throughput() -> None:
    t = torch.randn(64 << 20, device="cuda")  # 256 MB
    stream = torch.cuda.current_stream().cuda_stream

    def device_hash() -> None:
        batch = _native.GpuBatch(0, stream)
        batch.hash(t.data_ptr(), 4, [t.numel()], [1])
        batch.wait()

    def streamed_hashes() -> None:
        # As the recorder runs: hashes enqueued one after another on the
        # stream, results collected later (here once, after ten).
        batch = _native.GpuBatch(0, stream)
        for _ in range(10):
            batch.hash(t.data_ptr(), 4, [t.numel()], [1])
        batch.wait()

    waited = cuda_time(device_hash, 50)
    streamed = cuda_time(streamed_hashes, 10) / 10
    copied = cuda_time(lambda: t.clone(), 50)
    normed = cuda_time(lambda: t.double().norm(p=1).item(), 20)
    # The hash kernel's own time, as the profiler sees it: no host gaps.
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            streamed_hashes()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.name == "tthash_table"]
    kernel = sum(e.device_time for e in kernels) / 1e6 / 50 if kernels else float("nan")
    gb = t.nbytes / 1e12
    print(
        f"256 MB: tthash64-v1 {gb / kernel:5.2f} TB/s in its kernel ({len(kernels)} launches"
        f" of 10 hashes), {gb / streamed:5.2f} streamed, {gb / waited:5.2f}"
        f" waiting for each | copy {2 * gb / copied:5.2f} TB/s read+write"
        f" | DebugMode L1-norm hash {gb / normed:5.2f} TB/s"
    )
    assert tritontui.hash_tensor(t) == tritontui.hash_tensor(t.cpu())


def hash_counts(records: list[dict]) -> tuple[int, int, int]:
    """Tensors hashed (each hash counted), the bytes the device reads to
    hash them, and the hashes before a launch taken from the data flow
    instead (inherited, not hashed), over every launch argument and graph
    input of a dumped trace."""

    def nbytes(arg: dict) -> int:
        itemsize = torch.empty(0, dtype=getattr(torch, arg["dtype"])).element_size()
        return math.prod(arg["shape"]) * itemsize

    count = total = inherited = 0
    for record in records:
        if record["type"] == "input" and record.get("hash") is not None:
            count += 1
            total += nbytes(record)
        for arg in record.get("args", []) if record["type"] == "launch" else []:
            if "dtype" in arg:
                taken = bool(arg.get("inherited"))
                inherited += taken
                hashes = (arg.get("pre") is not None and not taken) + (arg.get("post") is not None)
                count += hashes
                total += hashes * nbytes(arg)
    return count, total, inherited


class Block(torch.nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.out = torch.nn.Linear(d, d)
        self.norm2 = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, d // self.heads).unbind(2)
        a = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True
        )
        x = x + self.out(a.transpose(1, 2).reshape(b, s, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


def compiled_step(dtype: torch.dtype) -> Callable[[], None]:
    """One forward and backward step of the compiled 4-layer transformer
    in ``dtype``, compiled and warmed up."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[Block(1024, 16) for _ in range(4)]).cuda().to(dtype)
    x = torch.randn(8, 512, 1024, device="cuda", dtype=dtype)
    compiled = torch.compile(model)

    def step() -> None:
        compiled(x).float().pow(2).mean().backward()

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    return step


# The recorded modes, defaults first: what a user gets.
MODES = {
    "defaults, metadata only (hash='none')": {"hash": "none"},
    "defaults (exact hashes in+out)": {},
    "fingerprints only (fingerprint=True)": {"fingerprint": True},
    "defaults + samples": {"samples": True},
    "defaults + rows": {"rows": True},
    "defaults, hashes launch by launch": {"env": {"TRITONTUI_DEFER_HASHES": "0"}},
    "metadata only, aten ops by the mode": {
        "hash": "none",
        "env": {"TRITONTUI_ATEN_OBSERVER": "0"},
    },
    "exact hashes, aten ops by the mode": {"env": {"TRITONTUI_ATEN_OBSERVER": "0"}},
    "aten=False, metadata only": {"aten": False, "hash": "none"},
    "aten=False, exact hashes in+out": {"aten": False},
}
# Each hashing mode beside the same options with metadata only.
METADATA_ONLY = {
    "defaults (exact hashes in+out)": "defaults, metadata only (hash='none')",
    "defaults, hashes launch by launch": "defaults, metadata only (hash='none')",
    "exact hashes, aten ops by the mode": "metadata only, aten ops by the mode",
    "aten=False, exact hashes in+out": "aten=False, metadata only",
}


def transformer(dtype: torch.dtype) -> None:
    step = compiled_step(dtype)
    times = turns_beside_the_floor(MODES, lambda: cuda_time(step, 10), ROUNDS)
    counts: dict[str, tuple[int, int, int, int, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.msgpack")
        for label, options in MODES.items():
            with recording(path, options):
                tables = _native.hash_table_launches()
                step()
                tables = _native.hash_table_launches() - tables
            torch.cuda.synchronize()
            records = dumped(path)
            launches = sum(1 for r in records if r["type"] == "launch")
            counts[label] = (launches, *hash_counts(records), tables)
    from torch.utils._debug_mode import DebugMode

    debug = []
    with DebugMode():
        debug.append(("DebugMode, no hashes", cuda_time(step, 5)))
    with DebugMode(), DebugMode.log_tensor_hashes(hash_inputs=True):
        debug.append(("DebugMode, log_tensor_hashes(hash_inputs=True)", cuda_time(step, 3)))
    plain = statistics.median(times["unrecorded"])
    print(
        f"\ntransformer step (4 layers, d=1024, 16 heads, 8x512 tokens, {dtype}, fwd+bwd),"
        f" unrecorded {plain * 1e3:.2f} ms"
    )
    print(
        f"  {'':40} {'ms':>8} {'ratio (95% interval)':>21} {'launches':>9}"
        f" {'us/launch':>10} {'hashes':>7} {'GB':>6} {'us/hash':>8} {'inherited':>9}"
        f" {'tables':>6}"
    )
    ratios = paired_ratios(times, "unrecorded")
    medians = {label: statistics.median(seen) for label, seen in times.items()}
    for label in MODES:
        launches, hashes, hashed, inherited, tables = counts[label]
        per_launch = (medians[label] - plain) / launches * 1e6
        # What hashing adds to the same mode's metadata-only step, per hash.
        meta = METADATA_ONLY.get(label)
        per_hash = (
            f"{(medians[label] - medians[meta]) / hashes * 1e6:8.2f}" if meta else f"{'-':>8}"
        )
        print(
            f"  {label:40} {medians[label] * 1e3:8.2f} {summary(ratios[label])}"
            f" {launches:9d} {per_launch:10.2f} {hashes:7d}"
            f" {hashed / 1e9:6.2f} {per_hash} {inherited:9d} {tables:6d}"
        )
    print(floor_row(times, ratios))
    print("  where a step's host time goes (_bench.step_phases):")
    step_phases(step, torch.cuda.synchronize, 20)
    for label, seconds in debug:
        print(f"  {label:48} {seconds * 1e3:8.2f} ms  {seconds / plain:6.2f}x")
    print(
        f"  (recorded rows: the median of {ROUNDS} per-round ratios to the unrecorded step,"
        " with a 95% interval of that median; us/launch: time added per recorded launch;"
        " us/hash: time hashing adds to the same mode's metadata-only step, per hash;"
        " inherited: hashes before a launch taken from the data flow, not computed;"
        " tables: hash table launches per step)"
    )


OPTIMIZER_MODES = {
    "defaults (hashes inherited in the step)": {},
    "every input hashed": {"env": {"TRITONTUI_HASH_EVERY_INPUT": "1"}},
    "metadata only": {"hash": "none"},
}


def optimizer_step() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[Block(1024, 16) for _ in range(4)]).cuda()
    for p in model.parameters():
        p.grad = torch.randn_like(p) * 1e-3
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    optimizer.step()
    times = take_turns(
        {"unrecorded": None, **OPTIMIZER_MODES}, lambda: cuda_time(optimizer.step, 10), ROUNDS
    )
    ratios = paired_ratios(times, "unrecorded")
    plain = statistics.median(times["unrecorded"])
    params = sum(p.numel() for p in model.parameters())
    print(
        f"\neager AdamW step (foreach) over {params / 1e6:.0f} M fp32 parameters,"
        f" unrecorded {plain * 1e3:.2f} ms"
    )
    print(
        f"  {'':40} {'ms':>8} {'ratio (95% interval)':>21} {'launches':>9}"
        f" {'hashes':>7} {'GB':>6} {'inherited':>9} {'tables':>6}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.msgpack")
        for label, options in OPTIMIZER_MODES.items():
            with recording(path, options):
                tables = _native.hash_table_launches()
                optimizer.step()
                tables = _native.hash_table_launches() - tables
            torch.cuda.synchronize()
            records = dumped(path)
            launches = sum(1 for r in records if r["type"] == "launch")
            hashes, hashed, inherited = hash_counts(records)
            print(
                f"  {label:40} {statistics.median(times[label]) * 1e3:8.2f}"
                f" {summary(ratios[label])} {launches:9d} {hashes:7d} {hashed / 1e9:6.2f}"
                f" {inherited:9d} {tables:6d}"
            )


def read_bandwidth() -> float:
    """Bytes per second the device reads (a sum over 1 GB)."""
    t = torch.randn(256 << 20, device="cuda")
    return t.nbytes / cuda_time(lambda: t.sum(), 20)


# The recorded modes of the graphed step, defaults first.
GRAPHED_MODES = {
    "defaults, metadata only (hash='none')": {"hash": "none"},
    "defaults (exact hashes in+out)": {},
}
# Steps each turn runs before it is timed: warm-up, capture, first replay.
GRAPHED_WARM_UP = 3


def graphed_step(model: torch.nn.Module, x: torch.Tensor) -> Callable[[], None]:
    """A forward of ``model`` on ``x`` compiled afresh (from Inductor's
    cache) with mode="reduce-overhead", not yet run: a graph is recorded
    only when captured while recording."""
    torch._dynamo.reset()
    compiled = torch.compile(model, mode="reduce-overhead")

    def step() -> None:
        torch.compiler.cudagraph_mark_step_begin()
        with torch.no_grad():
            compiled(x).float().pow(2).mean()

    return step


def graphed_transformer(dtype: torch.dtype, bandwidth: float) -> None:
    # The forward alone, as an inference server runs it: with its backward
    # this step fails under reduce-overhead even unrecorded (torch 2.11 on
    # an H200, with the default and the math attention alike: the backward
    # reads "tensor output of CUDAGraphs that has been overwritten by a
    # subsequent run").
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[Block(1024, 16) for _ in range(4)]).cuda().to(dtype)
    x = torch.randn(8, 512, 1024, device="cuda", dtype=dtype)

    def turn() -> float:
        # Every turn compiles and captures again.
        step = graphed_step(model, x)
        for _ in range(GRAPHED_WARM_UP):
            step()
        return cuda_time(step, 10)

    turn()  # compiles
    times = take_turns({"unrecorded": None, **GRAPHED_MODES}, turn, ROUNDS)
    counts: dict[str, tuple[int, int, int, int, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.msgpack")
        for label, options in GRAPHED_MODES.items():
            with recording(path, options):
                step = graphed_step(model, x)
                for _ in range(GRAPHED_WARM_UP):
                    step()
                tritontui.mark("timed")
                step()
                torch.cuda.synchronize()
            records = dumped(path)
            after = next(r["after"] for r in records if r["type"] == "marker")
            stepped = [
                r
                for r in records
                if r["type"] == "launch" and r["replay"] is not None and r["seq"] > after
            ]
            replays = {(r["replay"]["graph"], r["replay"]["n"]) for r in stepped}
            # What the hash kernels inside the graphs read: each replay
            # reads its graph's table's bytes once (a hash before a launch
            # that shares the slot of an earlier hash after reads nothing).
            graphs = {r["graph"]: r for r in records if r["type"] == "cuda_graph"}
            in_graphs = sum(graphs[g]["bytes"] for g, _ in replays)
            # And what the step hashes outside them: the graph call's
            # inputs, the copy of its static inputs, the eager ops after it.
            _, outside, _ = hash_counts(
                [
                    r
                    for r in records
                    if (r["type"] == "input" and r["before"] > after)
                    or (r["type"] == "launch" and r["replay"] is None and r["seq"] > after)
                ]
            )
            counts[label] = (
                len(replays),
                len(stepped),
                in_graphs,
                in_graphs + outside,
                sum(graphs[g]["hash_kernels"] for g, _ in replays),
            )
    plain = statistics.median(times["unrecorded"])
    print(
        f"\ntransformer forward compiled with mode='reduce-overhead' ({dtype}, inference),"
        f" unrecorded {plain * 1e3:.2f} ms; device read bandwidth {bandwidth / 1e12:.2f} TB/s"
    )
    print(
        f"  {'':40} {'ms':>8} {'ratio (95% interval)':>21} {'replays':>8} {'launches':>9}"
        f" {'us/replay':>10} {'GB':>6} {'in graphs':>10} {'traffic alone':>14}"
        f" {'hash kernels':>13}"
    )
    ratios = paired_ratios(times, "unrecorded")
    for label in GRAPHED_MODES:
        replays, launched, in_graphs, hashed, kernels = counts[label]
        median = statistics.median(times[label])
        per_replay = (median - plain) / max(replays, 1) * 1e6
        implied = 1 + hashed / bandwidth / plain
        print(
            f"  {label:40} {median * 1e3:8.2f} {summary(ratios[label])} {replays:8d}"
            f" {launched:9d} {per_replay:10.2f} {hashed / 1e9:6.2f} {in_graphs / 1e9:10.2f}"
            f" {implied:13.2f}x {kernels:13d}"
        )
    print(
        f"  (median of {ROUNDS} per-round ratios, graphs captured afresh every turn; replays,"
        " launches: per step, the launches those replays ran; GB: bytes the exact hashes"
        " read per step, in graphs: of those, the replayed graphs' hash kernels; traffic"
        " alone: the ratio reading every one of those bytes once at the measured bandwidth"
        " would give; hash kernels: per step, inside the replayed graphs)"
    )


def cpp_wrapper_transformer(dtype: torch.dtype) -> None:
    """The transformer step compiled with ``cpp_wrapper=True``."""

    def build(hooked: bool) -> Callable[[], float]:
        torch.manual_seed(0)
        model = torch.nn.Sequential(*[Block(1024, 16) for _ in range(4)]).cuda().to(dtype)
        x = torch.randn(8, 512, 1024, device="cuda", dtype=dtype)
        compiled = torch.compile(own_forward(model, "hooked" if hooked else "stock"))

        def step() -> None:
            compiled(x).float().pow(2).mean().backward()

        for _ in range(3):
            step()
        torch.cuda.synchronize()
        return lambda: cuda_time(step, 10)

    print(f"\ntransformer step with cpp_wrapper=True ({dtype}, fwd+bwd), {ROUNDS} rounds:")
    cpp_wrapper_turns(build, ROUNDS)


if __name__ == "__main__":
    print(torch.cuda.get_device_name(0), torch.__version__)
    t0 = time.time()
    # Sections to run (default: all): launch, hash, transformer, graphed, capture, cpp_wrapper.
    sections = set(sys.argv[1:]) or {
        "launch",
        "hash",
        "transformer",
        "graphed",
        "capture",
        "cpp_wrapper",
        "optimizer",
    }
    if "launch" in sections:
        launch_cost("cuda", 2000, 7)
        launch_pieces("cuda", 2000, 9, {"hash": "none"})
        launch_pieces("cuda", 2000, 9, {})
        launch_phases("cuda", 3000)
    if "hash" in sections:
        hash_throughput()
    for dtype in (torch.bfloat16, torch.float32) if "transformer" in sections else ():
        transformer(dtype)
    if "graphed" in sections:
        bandwidth = read_bandwidth()
        for dtype in (torch.bfloat16, torch.float32):
            graphed_transformer(dtype, bandwidth)
    if "capture" in sections:
        capture_cost(1 << 22, 20, "cuda")
        start_stop_cost("cuda", 4096)
    for dtype in (torch.bfloat16, torch.float32) if "cpp_wrapper" in sections else ():
        cpp_wrapper_transformer(dtype)
    if "optimizer" in sections:
        optimizer_step()
    print(f"({time.time() - t0:.0f} s)")

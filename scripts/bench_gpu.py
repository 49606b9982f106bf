"""GPU benchmark, side by side in one process (needs CUDA):

1. tthash64-v1 on a 256 MB tensor, beside a device-to-device copy and
   DebugMode's L1-norm hash of the same tensor.
2. A compiled 4-layer transformer (d=1024, 16 heads, batch 8 x 512 tokens),
   forward and backward: step time unrecorded, with the recorder's hooks
   installed but no kernel selected, recorded with metadata only and
   recorded with exact hashes before and after every launch (taking
   turns for ROUNDS rounds; each recorded mode's ratio is the median of its
   per-round ratios to the unrecorded step measured beside it), and under
   DebugMode with and without tensor hashes.

    python scripts/bench_gpu.py
"""

from __future__ import annotations

import math
import os
import statistics
import tempfile
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
import tritontui
from tritontui import _native

# Turns each recording mode takes in the transformer benchmark: enough
# that the median of the per-round ratios is known to a few hundredths on
# a host whose speed halves and doubles from one second to the next.
ROUNDS = 40


def median_interval(values: list[float]) -> tuple[float, float]:
    """A 95% confidence interval for the median of ``values``, from their
    order statistics (no assumption about their distribution)."""
    ordered = sorted(values)
    n = len(ordered)
    half_width = 0.98 * math.sqrt(n)
    low = max(0, math.floor(n / 2 - half_width) - 1)
    high = min(n - 1, math.ceil(n / 2 + 1 + half_width) - 1)
    return ordered[low], ordered[high]


def cuda_time(fn, repeat: int) -> float:
    """Seconds per call, measured with CUDA events after a warm-up."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
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
    gb = t.nbytes / 1e12
    print(
        f"256 MB: tthash64-v1 {gb / streamed:5.2f} TB/s read streamed, {gb / waited:5.2f}"
        f" waiting for each | copy {2 * gb / copied:5.2f} TB/s read+write"
        f" | DebugMode L1-norm hash {gb / normed:5.2f} TB/s"
    )
    assert tritontui.hash_tensor(t) == tritontui.hash_tensor(t.cpu())


def hashed_bytes(records: list[dict]) -> int:
    """Bytes the device reads to hash every argument and graph input of a
    dumped trace."""

    def nbytes(arg: dict) -> int:
        itemsize = torch.empty(0, dtype=getattr(torch, arg["dtype"])).element_size()
        return math.prod(arg["shape"]) * itemsize

    total = 0
    for record in records:
        if record["type"] == "input" and record.get("hash") is not None:
            total += nbytes(record)
        for arg in record.get("args", []) if record["type"] == "launch" else []:
            if "dtype" in arg:
                hashes = (arg.get("pre") is not None) + (arg.get("post") is not None)
                total += hashes * nbytes(arg)
    return total


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


def compiled_step() -> Callable[[], None]:
    """One forward and backward step of the compiled 4-layer transformer,
    compiled and warmed up."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[Block(1024, 16) for _ in range(4)]).cuda().to(torch.bfloat16)
    x = torch.randn(8, 512, 1024, device="cuda", dtype=torch.bfloat16)
    compiled = torch.compile(model)

    def step() -> None:
        compiled(x).float().pow(2).mean().backward()

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    return step


def transformer() -> None:
    step = compiled_step()
    rows = []

    def measure(label: str, repeat: int = 20) -> float:
        seconds = cuda_time(step, repeat)
        rows.append((label, seconds))
        return seconds

    # The step is bound by a shared host whose speed drifts from minute to
    # minute: the three modes take turns, ROUNDS times (in reverse order
    # every other round, so that a steady drift favours none), and each
    # recorded mode's ratio is the median of its ratios to the unrecorded
    # step of the same round.
    # "Hook only" records nothing (its kernel filter matches no kernel): it
    # measures what forwarding each launch through the recorder's hook
    # costs on this host, the floor under the two recording modes.
    modes = {
        "unrecorded": None,
        "tritontui, hook only (no kernel selected)": {"hash": "none", "kernels": "no kernel"},
        "tritontui, metadata only": {"hash": "none"},
        "tritontui, exact hashes in+out": {"hash": "both"},
    }
    times: dict[str, list[float]] = {label: [] for label in modes}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.msgpack")
        for round_ in range(ROUNDS):
            order = list(modes.items())
            for label, options in order if round_ % 2 == 0 else order[::-1]:
                if options is None:
                    times[label].append(cuda_time(step, 10))
                    continue
                with tritontui.record(path, aten=False, **options):
                    times[label].append(cuda_time(step, 10))
        for label, seen in times.items():
            rows.append((label, statistics.median(seen)))
        plain = rows[0][1]
        with tritontui.record(path, hash="both", aten=False):
            step()
        torch.cuda.synchronize()
        import json
        import subprocess

        binary = os.environ.get("TRITONTUI_BIN", "tritontui")
        dumped = subprocess.run(
            [binary, "dump", path], capture_output=True, text=True, check=True
        ).stdout
        kinds = [json.loads(line) for line in dumped.splitlines()]
        triton = sum(1 for r in kinds if r["type"] == "launch" and r["backend"] == "triton")
        total = sum(1 for r in kinds if r["type"] == "launch")
        hashed = hashed_bytes(kinds)
    from torch.utils._debug_mode import DebugMode

    with DebugMode():
        measure("DebugMode, no hashes", 5)
    with DebugMode(), DebugMode.log_tensor_hashes(hash_inputs=True):
        measure("DebugMode, log_tensor_hashes(hash_inputs=True)", 3)
    print(
        f"\ntransformer step (4 layers, d=1024, 16 heads, 8x512 tokens, bf16, fwd+bwd): "
        f"{triton} Triton launches and {total - triton} other recorded launches per step;"
        f" exact hashes read {hashed / 1e9:.2f} GB per step"
    )
    paired = {
        label: [t / p for t, p in zip(seen, times["unrecorded"], strict=True)]
        for label, seen in times.items()
    }
    for label, seconds in rows:
        ratio = statistics.median(paired[label]) if label in paired else seconds / plain
        print(f"  {label:48} {seconds * 1e3:8.2f} ms  {ratio:6.2f}x")
    print(f"  (recorded rows: the median of {ROUNDS} per-round ratios to the unrecorded step)")
    for label, ratios in paired.items():
        if label == "unrecorded":
            continue
        q1, _, q3 = statistics.quantiles(ratios, n=4)
        low, high = median_interval(ratios)
        print(
            f"  ({label}: median {statistics.median(ratios):.2f}x, 95% interval of the median"
            f" {low:.2f}x-{high:.2f}x; per round {min(ratios):.2f}x-{max(ratios):.2f}x,"
            f" middle half {q1:.2f}x-{q3:.2f}x)"
        )


if __name__ == "__main__":
    print(torch.cuda.get_device_name(0), torch.__version__)
    t0 = time.time()
    hash_throughput()
    transformer()
    print(f"({time.time() - t0:.0f} s)")

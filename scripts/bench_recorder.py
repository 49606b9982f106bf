"""Benchmark of the recorder on the CPU, side by side in one process:
CPU hash throughput (tthash64-v1 on 256 MB, contiguous and strided), and
the time a compiled kernel launch costs unrecorded, recorded with the
default options (aten ops around the kernels, exact hashes before and
after), and with aten ops off, with metadata only or exact hashes.

    .venv/bin/python scripts/bench_recorder.py
"""

from __future__ import annotations

import os
import tempfile
import time

import torch
import tritontui


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


if __name__ == "__main__":
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, {os.cpu_count()} cores")
    hash_throughput()
    launch_overhead(1024, 2000)
    launch_overhead(1 << 20, 200)

"""The kernel timeline of a graphed replay: ``scripts/bench_gpu.py``'s
transformer forward compiled with ``mode="reduce-overhead"``, unrecorded
and recorded with the defaults (exact hashes), each replay's kernels as
``torch.profiler`` sees them on the device (CUDA activity), the model's
beside the recorder's hash kernels (``tthash_table``). Prints the last of
three replays kernel by kernel, then the totals. Needs CUDA.

    python scripts/bench_gpu_graphed_kernels.py [bfloat16|float32] [TRACE]

With TRACE, the recorded run's trace is kept there (to read each graph's
captured launches and the bytes their hashes read beside the timeline).
"""

from __future__ import annotations

import sys
import tempfile

import torch
import tritontui

# The script's folder is on the path: bench_gpu's model and step.
from bench_gpu import Block, graphed_step
from torch.profiler import ProfilerActivity, profile

STEPS = 3


def timeline(model: torch.nn.Module, x: torch.Tensor) -> list:
    """The device's kernels of STEPS replays, after three warm-up steps
    (compile, capture, first replay), in the order they ran."""
    step = graphed_step(model, x)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(STEPS):
            step()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type.name == "CUDA"]
    return sorted(kernels, key=lambda e: e.time_range.start)


def show(label: str, kernels: list) -> None:
    last = kernels[(STEPS - 1) * len(kernels) // STEPS :]
    print(f"\n{label}: the last of {STEPS} replays")
    totals = {"model": 0.0, "hash": 0.0}
    launches = {"model": 0, "hash": 0}
    for e in last:
        us = e.time_range.end - e.time_range.start
        kind = "hash" if "tthash" in e.name else "model"
        totals[kind] += us
        launches[kind] += 1
        print(f"  {us:8.1f} us  {kind:5}  {e.name[:90]}")
    span = last[-1].time_range.end - last[0].time_range.start
    print(
        f"  model kernels {launches['model']} ({totals['model']:.0f} us),"
        f" hash kernels {launches['hash']} ({totals['hash']:.0f} us), replay span {span:.0f} us"
    )


if __name__ == "__main__":
    dtype = getattr(torch, sys.argv[1] if len(sys.argv) > 1 else "bfloat16")
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[Block(1024, 16) for _ in range(4)]).cuda().to(dtype)
    x = torch.randn(8, 512, 1024, device="cuda", dtype=dtype)
    print(torch.cuda.get_device_name(0), torch.__version__, dtype)
    show("unrecorded", timeline(model, x))
    trace = sys.argv[2] if len(sys.argv) > 2 else tempfile.mktemp(suffix=".msgpack")
    with tritontui.record(trace):
        recorded = timeline(model, x)
    show("recorded (defaults: exact hashes)", recorded)

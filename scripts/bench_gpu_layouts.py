"""Where the GPU hash kernel spends its time in a real step: every
argument layout (dtype, shape, strides) that one recorded step of
``scripts/bench_gpu.py``'s transformer hashes, each hashed alone on the
device and timed by ``torch.profiler`` (the kernel only, no host time),
sorted by the time the step spends on it. Needs CUDA.

    python scripts/bench_gpu_layouts.py [bfloat16|float32 ...]
"""

from __future__ import annotations

import collections
import sys
import tempfile
from pathlib import Path

import torch
import tritontui

# The script's folder is on the path: bench_gpu's step and trace reader.
from bench_gpu import compiled_step, dumped
from tritontui import _native

SHOWN = 12


def hashed_layouts(dtype: torch.dtype) -> collections.Counter:
    """How many hashes one recorded step computes per argument layout
    (hashes taken from the data flow are not computed)."""
    step = compiled_step(dtype)
    path = tempfile.mktemp(suffix=".msgpack")
    with tritontui.record(path):
        step()
    torch.cuda.synchronize()
    layouts: collections.Counter = collections.Counter()
    for record in dumped(path):
        if record["type"] != "launch":
            continue
        for arg in record["args"]:
            if "shape" not in arg:
                continue
            computed = (arg["pre"] is not None and not arg["inherited"]) + (arg["post"] is not None)
            if computed:
                layouts[(arg["dtype"], tuple(arg["shape"]), tuple(arg["stride"]))] += computed
    Path(path).unlink()
    return layouts


def kernel_us(dtype: str, shape: tuple, stride: tuple) -> tuple[float, int]:
    """The median kernel time of hashing a view of this layout, and its bytes."""
    span = 1 + sum((n - 1) * s for n, s in zip(shape, stride, strict=True)) if all(shape) else 1
    view = torch.empty(span, dtype=getattr(torch, dtype), device="cuda").as_strided(shape, stride)
    stream = torch.cuda.current_stream().cuda_stream

    def once() -> None:
        batch = _native.GpuBatch(0, stream)
        batch.hash(view.data_ptr(), view.element_size(), list(shape), list(stride))
        batch.wait()

    for _ in range(3):
        once()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(10):
            once()
    times = sorted(
        e.device_time
        for e in prof.events()
        if e.device_type == torch.autograd.DeviceType.CUDA and "hash" in e.name
    )
    return times[len(times) // 2], view.numel() * view.element_size()


def main() -> None:
    print(torch.cuda.get_device_name(), torch.__version__)
    for name in sys.argv[1:] or ["bfloat16", "float32"]:
        layouts = hashed_layouts(getattr(torch, name))
        rows = []
        for (dtype, shape, stride), count in layouts.items():
            us, nbytes = kernel_us(dtype, shape, stride)
            rows.append((us * count, us, count, nbytes, dtype, shape, stride))
        rows.sort(reverse=True)
        total = sum(r[0] for r in rows) / 1e3
        print(
            f"\n{name} step: {sum(layouts.values())} hashes computed, "
            f"{total:.2f} ms of hash kernels (each run alone); the {SHOWN} costliest layouts:"
        )
        print("  ms/step  hashes  us/hash   TB/s       MB  dtype shape strides")
        for step_us, us, count, nbytes, dtype, shape, stride in rows[:SHOWN]:
            print(
                f"  {step_us / 1e3:7.2f} {count:7d} {us:8.1f} {nbytes / us / 1e6:6.2f} "
                f"{nbytes / 2**20:8.2f}  {dtype} {list(shape)} {list(stride)}"
            )


if __name__ == "__main__":
    main()

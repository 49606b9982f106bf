"""What intercepting Inductor's launches costs on the GPU host, apart from
recording them (needs CUDA): the transformer step of ``bench_gpu.py``
unrecorded, with ``CachingAutotuner.run`` wrapped by a plain Python
function, with a recording session whose Triton hook is left out, with the
recorder's native hook alone (its kernel filter matching nothing, no
session around it), and with a whole session that records no kernel. The
variants take turns for 40 rounds; each ratio is the median of the
per-round ratios to the unrecorded step, with its 95% interval.

    python scripts/bench_gpu_hook.py
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import types

import bench_gpu
import torch
import tritontui
from _bench import median_interval
from torch._inductor.runtime.triton_heuristics import CachingAutotuner
from tritontui import _native
from tritontui.hooks import triton as triton_hook

ROUNDS = 40
ORIGINAL = CachingAutotuner.run


def python_wrapper(self, *args, **kwargs):
    return ORIGINAL(self, *args, **kwargs)


def native_hook(tmp: str) -> _native.TritonHook:
    """The recorder's hook over a bare trace file, told to record nothing."""
    header = {"format": "tritontui-trace", "version": [1, 2], "created_ns": 0}
    trace = _native.TraceFile(os.path.join(tmp, "bare.msgpack"), json.dumps(header), tmp)
    session = types.SimpleNamespace(
        file=trace, hash_inputs=False, hash_outputs=False, stats=False, breaks=None, fail=print
    )
    helpers = types.SimpleNamespace(prepare=lambda autotuner, session: ("", b"", False))
    return _native.TritonHook(ORIGINAL, session, helpers)


def main() -> None:
    step = bench_gpu.compiled_step(torch.bfloat16)

    def timed(variant: str, tmp: str) -> float:
        if variant == "unrecorded":
            return bench_gpu.cuda_time(step, 10)
        if variant.startswith("session"):
            skip_hook = variant == "session without the Triton hook"
            install = triton_hook.install
            if skip_hook:
                triton_hook.install = lambda session: None
            try:
                path = os.path.join(tmp, "t.msgpack")
                with tritontui.record(path, hash="none", kernels="no kernel", aten=False):
                    return bench_gpu.cuda_time(step, 10)
            finally:
                triton_hook.install = install
        wrapper = python_wrapper if variant == "Python wrapper" else native_hook(tmp)
        CachingAutotuner.run = wrapper
        try:
            return bench_gpu.cuda_time(step, 10)
        finally:
            CachingAutotuner.run = ORIGINAL

    variants = [
        "unrecorded",
        "Python wrapper",
        "session without the Triton hook",
        "native hook without a session",
        "session recording no kernel",
    ]
    times: dict[str, list[float]] = {v: [] for v in variants}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(ROUNDS):
            for variant in variants if round_ % 2 == 0 else variants[::-1]:
                times[variant].append(timed(variant, tmp))
    plain = times["unrecorded"]
    print(f"{torch.cuda.get_device_name(0)}: transformer step, {ROUNDS} rounds")
    for variant, seen in times.items():
        ratios = [t / p for t, p in zip(seen, plain, strict=True)]
        low, high = median_interval(ratios)
        ratio = statistics.median(ratios)
        print(
            f"  {variant:34} {statistics.median(seen) * 1e3:6.2f} ms  {ratio:5.3f}x"
            f" ({low:.3f}-{high:.3f})"
        )


if __name__ == "__main__":
    main()

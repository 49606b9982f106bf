"""Inductor's extern kernels (``extern_kernels.mm`` and the like, called by
a compiled graph's wrapper) recorded by the recorder's native proxies
against through its dispatch mode (``TRITONTUI_EXTERN_HOOK=0``), side by
side (issue 17, direction 1):

1. On the CPU: a compiled 8-layer MLP's training step (24 extern kernels
   a step, one thread), recorded with metadata only and with exact hashes.
2. With CUDA: the GPU benchmark's transformer step, recorded with the
   defaults, and with the mode popped for the whole of each graph call
   (the extern kernels and fallbacks then not recorded at all, and
   nothing inside the call dispatched to Python): what recording them
   natively could save at most.

Both record aten ops through the dispatch mode (``TRITONTUI_ATEN_OBSERVER=0``,
set here): the native observer needs no proxies.

Each mode takes turns with the unrecorded step for ROUNDS rounds (in
reverse order every other round); ratios are medians of per-round ratios.

    python scripts/bench_extern.py        # ROUNDS=10 by default
"""

from __future__ import annotations

import contextlib
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator

import torch
from _bench import paired_ratios, recording, summary
from torch._inductor.output_code import CompiledFxGraph
from torch.utils._python_dispatch import _get_current_dispatch_mode
from tritontui import hooks

ROUNDS = int(os.environ.get("ROUNDS", "10"))
# The proxies stand in for the dispatch mode only.
os.environ["TRITONTUI_ATEN_OBSERVER"] = "0"
THROUGH_THE_MODE = {"TRITONTUI_EXTERN_HOOK": "0"}


@contextlib.contextmanager
def mode_off_in_graph_calls() -> Iterator[None]:
    """Pops the recorder's aten mode while each compiled graph runs (to be
    entered while recording, after the recorder's own graph-call hook)."""
    recorded_call = CompiledFxGraph.__call__

    def call(self, inputs):
        mode = hooks._ATEN
        if mode is None or _get_current_dispatch_mode() is not mode:
            return recorded_call(self, inputs)
        popped = torch._C._pop_torch_dispatch_stack(None)
        try:
            return recorded_call(self, inputs)
        finally:
            torch._C._push_on_torch_dispatch_stack(popped)

    CompiledFxGraph.__call__ = call
    try:
        yield
    finally:
        CompiledFxGraph.__call__ = recorded_call


def compare(
    title: str, step: Callable[[], None], measure: Callable[[], float], modes: dict
) -> None:
    """Prints each mode's time per step and ratio to the unrecorded step.
    ``modes``: label -> (options of tritontui.record, whether the mode is
    off in graph calls)."""
    modes = {"unrecorded": (None, False), **modes}
    times: dict[str, list[float]] = {label: [] for label in modes}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.msgpack")
        for round_ in range(ROUNDS):
            order = list(modes.items())
            for label, (options, off) in order if round_ % 2 == 0 else order[::-1]:
                if options is None:
                    times[label].append(measure())
                    continue
                graphs = mode_off_in_graph_calls() if off else contextlib.nullcontext()
                with recording(path, options), graphs:
                    times[label].append(measure())
    ratios = paired_ratios(times, "unrecorded")
    print(f"\n{title}, unrecorded {statistics.median(times['unrecorded']) * 1e3:.3f} ms")
    for label in list(modes)[1:]:
        print(
            f"  {label:48} {statistics.median(times[label]) * 1e3:8.3f} ms {summary(ratios[label])}"
        )


def cpu_mlp() -> None:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(16, 16) for _ in range(8)])
    compiled, x = torch.compile(model), torch.randn(4, 16)

    def step() -> None:
        compiled(x).sum().backward()

    def measure(steps: int = 200) -> float:
        start = time.perf_counter()
        for _ in range(steps):
            step()
        return (time.perf_counter() - start) / steps

    for _ in range(3):
        step()
    compare(
        "compiled 8-layer MLP step on the CPU (24 extern kernels), 1 thread",
        step,
        measure,
        {
            "metadata only, extern kernels by native proxies": ({"hash": "none"}, False),
            "metadata only, extern kernels through the mode": (
                {"hash": "none", "env": THROUGH_THE_MODE},
                False,
            ),
            "exact hashes, extern kernels by native proxies": ({}, False),
            "exact hashes, extern kernels through the mode": ({"env": THROUGH_THE_MODE}, False),
        },
    )


def gpu_transformer() -> None:
    from bench_gpu import compiled_step, cuda_time

    print(torch.cuda.get_device_name(0))
    for dtype in (torch.bfloat16, torch.float32):
        step = compiled_step(dtype)
        compare(
            f"transformer step, {dtype}",
            step,
            lambda step=step: cuda_time(step, 10),
            {
                "defaults, metadata only": ({"hash": "none"}, False),
                "defaults, metadata only, mode off in graph calls": ({"hash": "none"}, True),
                "defaults (exact hashes)": ({}, False),
                "defaults (exact hashes), mode off in graph calls": ({}, True),
            },
        )


if __name__ == "__main__":
    print(torch.__version__)
    cpu_mlp()
    if torch.cuda.is_available():
        gpu_transformer()

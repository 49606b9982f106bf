"""What recording Inductor's extern kernels without the dispatch mode could
save at most (issue 17, direction 1), on the GPU benchmark's transformer
step (needs CUDA).

Inside a compiled graph's call, the aten ops the recorder sees are the
extern kernels and fallbacks of the generated wrapper (``extern_kernels.mm``,
``torch.ops.aten._scaled_dot_product_*``): each goes through the recorder's
``TorchDispatchMode``. Here the mode is popped for the length of each graph
call, so those ops are neither dispatched to Python nor recorded at all:
whatever a native hook recording them would cost, it cannot do better.
Each mode takes turns with the unrecorded step for ROUNDS rounds.

    python scripts/bench_gpu_extern.py        # ROUNDS=10 by default
"""

from __future__ import annotations

import contextlib
import os
import statistics
import tempfile
from collections.abc import Iterator

import torch
from _bench import paired_ratios, recording, summary
from bench_gpu import compiled_step, cuda_time, dumped
from torch._inductor.output_code import CompiledFxGraph
from torch.utils._python_dispatch import _get_current_dispatch_mode
from tritontui import hooks

ROUNDS = int(os.environ.get("ROUNDS", "10"))


@contextlib.contextmanager
def mode_off_in_graph_calls() -> Iterator[None]:
    """Pops the recorder's aten mode while each compiled graph runs (to be
    entered while recording, after the recorder's own graph-call hook)."""
    recorded_call = CompiledFxGraph.__call__

    def call(self, inputs):
        mode = hooks._ATEN_MODE
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


# Label: (options of tritontui.record, whether the mode is off in graph calls).
MODES = {
    "defaults, metadata only": ({"hash": "none"}, False),
    "defaults, metadata only, mode off in graphs": ({"hash": "none"}, True),
    "defaults (exact hashes)": ({}, False),
    "defaults (exact hashes), mode off in graphs": ({}, True),
}


@contextlib.contextmanager
def recorded(path: str, options: dict, off_in_graphs: bool) -> Iterator[None]:
    off = mode_off_in_graph_calls() if off_in_graphs else contextlib.nullcontext()
    with recording(path, options), off:
        yield


def launches_per_step(path: str, options: dict, off_in_graphs: bool, step) -> int:
    with recorded(path, options, off_in_graphs):
        step()
    torch.cuda.synchronize()
    return sum(1 for r in dumped(path) if r["type"] == "launch")


def main() -> None:
    print(torch.cuda.get_device_name(0), torch.__version__)
    for dtype in (torch.bfloat16, torch.float32):
        step = compiled_step(dtype)
        modes = {"unrecorded": (None, False), **MODES}
        times: dict[str, list[float]] = {label: [] for label in modes}
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "t.msgpack")
            for round_ in range(ROUNDS):
                order = list(modes.items())
                for label, (options, off) in order if round_ % 2 == 0 else order[::-1]:
                    if options is None:
                        times[label].append(cuda_time(step, 10))
                        continue
                    with recorded(path, options, off):
                        times[label].append(cuda_time(step, 10))
            launches = {
                label: launches_per_step(path, options, off, step)
                for label, (options, off) in MODES.items()
            }
        ratios = paired_ratios(times, "unrecorded")
        plain = statistics.median(times["unrecorded"])
        print(f"\ntransformer step, {dtype}, unrecorded {plain * 1e3:.2f} ms")
        for label in MODES:
            print(
                f"  {label:40} {statistics.median(times[label]) * 1e3:8.2f} ms"
                f" {summary(ratios[label])} {launches[label]:5d} launches"
            )


if __name__ == "__main__":
    main()

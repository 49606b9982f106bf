"""A row sum on the GPU compiled with ``mode="max-autotune-no-cudagraphs"``,
whose reduction kernel Inductor autotunes among several configs at its
first launch (in a fresh Inductor cache, so each run benchmarks), then
tunes further by coordinate descent from the fastest. The configs split
each row differently, so each gives other bits. With --variant the
benchmark is noisy: the config with the smallest reduction block measures
2 % faster than the fastest other one (its real time is replaced), as a
busy GPU can make it; run B then launches the kernel with another config
than run A."""

import os
import tempfile

os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="inductor-")

import torch
from _harness import parse, run
from torch._inductor.runtime.triton_heuristics import CachingAutotuner

args = parse(__doc__, variant="a noisy benchmark: the smallest reduction block wins by 2 %")


def block(launcher) -> int:
    kwargs = launcher.config.kwargs
    return kwargs.get("R0_BLOCK", kwargs.get("RBLOCK", 0))


if args.variant:
    real_benchmark = CachingAutotuner.benchmark_all_configs

    def noisy_benchmark(self, *rest, **kwargs):
        timings = real_benchmark(self, *rest, **kwargs)
        smallest = min(timings, key=block)
        others = [t for launcher, t in timings.items() if launcher is not smallest]
        if others:
            timings[smallest] = min(others) * 0.98
        return timings

    CachingAutotuner.benchmark_all_configs = noisy_benchmark

torch.manual_seed(0)
x = torch.randn(512, 8192, device="cuda")
row_sum = torch.compile(lambda t: (t * t).sum(dim=1), mode="max-autotune-no-cudagraphs")


def main() -> dict[str, torch.Tensor]:
    return {"sums": row_sum(x)}


run(args, main)

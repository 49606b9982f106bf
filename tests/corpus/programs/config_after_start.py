"""A small MLP compiled while recording; with --variant the program sets
Inductor's C++ vector length to 1 (torch._inductor.config.cpp.simdlen)
after recording began, as a notebook or a training script's config does
after ``import torch``: the header's settings, taken when recording
began, do not have it, and only each graph's compile can say it. A
second function compiled with ``options={"cpp.simdlen": 1}`` in both runs
keeps its kernels the same (its options are the same in both)."""

import torch
from _harness import parse, run

args = parse(__doc__, variant="set torch._inductor.config.cpp.simdlen = 1 after recording began")
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU(), torch.nn.Linear(64, 8))
x = torch.randn(32, 64)


def main() -> dict[str, torch.Tensor]:
    if args.variant:
        torch._inductor.config.cpp.simdlen = 1
    forward = torch.compile(model)
    head = torch.compile(lambda t: (t * 2).sin() / (t + 3), options={"cpp.simdlen": 1})
    y = forward(x)
    return {"y": y.detach(), "head": head(y.detach())}


run(args, main, threads=1)

"""A residual MLP compiled with ``mode="reduce-overhead"`` (CUDA graph
trees) and trained with Adam for a few steps; ``--atomic`` puts an atomic
index_add (65,536 rows into 16 bins) in its forward graph. Prints the
number of CUDA graph replays torch made (counted by wrapping
``CUDAGraph.replay`` before anything else does) and the losses' hash."""

import argparse

import torch
import tritontui

parser = argparse.ArgumentParser()
parser.add_argument("trace")
parser.add_argument("--atomic", action="store_true")
parser.add_argument("--steps", type=int, default=5)
parser.add_argument("--mode", default="reduce-overhead")
args = parser.parse_args()

replays = 0
replay = torch.cuda.CUDAGraph.replay


def counted(self):
    global replays
    replays += 1
    return replay(self)


torch.cuda.CUDAGraph.replay = counted

torch.manual_seed(0)
n, bins, width = 1 << 16, 16, 64
index = torch.randint(0, bins, (n,), device="cuda")
src = torch.randn(n, width, device="cuda")
model = torch.nn.Sequential(
    torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, width)
).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)


def forward(src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    if args.atomic:
        pooled = torch.zeros(bins, width, device=src.device).index_add(0, index, src)
    else:
        pooled = src.view(bins, -1, width).sum(1)
    hidden = pooled + model(pooled)
    return hidden.square().mean()


f = torch.compile(forward, mode=None if args.mode == "none" else args.mode)
losses = []
with tritontui.record(args.trace):
    for _ in range(args.steps):
        torch.compiler.cudagraph_mark_step_begin()
        loss = f(src, index)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach().clone())
print(f"replays {replays}")
print(f"losses {tritontui.hash_tensor(torch.stack(losses)):016x}")

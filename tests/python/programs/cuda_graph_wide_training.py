"""A wide MLP trained under mode="reduce-overhead": its forward saves
activations of 64 MB each for the backward graph, which takes them as
inputs that die during the call (CUDA graph trees check at each replay
that they died as they did when the graph was recorded). Records to
argv[1] with the default options unless ``--unrecorded``; prints how many
graph calls' input hashes ran beside the call, the CUDA graph replays
torch made, and a hash of the losses and weights."""

import argparse
import contextlib

import torch
import tritontui
from _replays import count_replays
from tritontui import _native

parser = argparse.ArgumentParser()
parser.add_argument("trace")
parser.add_argument("--unrecorded", action="store_true")
args = parser.parse_args()

replays = count_replays()
torch.manual_seed(0)
rows, width = 1 << 16, 256  # float32 activations: 64 MB each
x = torch.randn(rows, width, device="cuda")
model = torch.nn.Sequential(
    torch.nn.Linear(width, width), torch.nn.GELU(), torch.nn.Linear(width, width)
).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
step = torch.compile(lambda x: model(x).square().mean(), mode="reduce-overhead")
recording = contextlib.nullcontext() if args.unrecorded else tritontui.record(args.trace)
losses = []
with recording:
    start = _native.input_hash_forks()
    for _ in range(5):
        torch.compiler.cudagraph_mark_step_begin()
        loss = step(x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach().clone())
    torch.cuda.synchronize()
    print("input hash forks", _native.input_hash_forks() - start)
print("replays", replays["replays"])
kept = torch.cat([torch.stack(losses)] + [p.detach().flatten() for p in model.parameters()])
print(f"results {tritontui.hash_tensor(kept):016x}")

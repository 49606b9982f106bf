"""A compiled CUDA function whose launches overwrite what earlier launches
wrote and read: an input updated in place, a slice of an input written
through an aliasing view, Inductor's buffers reused along a chain of
reductions and matmuls. Records to argv[1] with the default options and
prints how many hash table launches the recording enqueued."""

import sys

import torch
import tritontui
from tritontui import _native

torch.manual_seed(0)


@torch.compile
def step(x: torch.Tensor, w: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
    h = x
    for _ in range(4):
        h = torch.relu(h @ w) + h.mean(0, keepdim=True)
        h = torch.softmax(h.t() @ h, dim=-1) @ h.t()
        h = h.t().contiguous()
    state.mul_(0.5).add_(h.sum(0))
    x[:, ::2].add_(state[::2])
    return (h * x).sum(1)


x = torch.randn(64, 64, device="cuda")
w = torch.randn(64, 64, device="cuda") / 8
state = torch.zeros(64, device="cuda")
with tritontui.record(sys.argv[1]):
    start = _native.hash_table_launches()
    for _ in range(3):
        out = step(x, w, state)
        x = x + out[:, None] / 64
    torch.cuda.synchronize()
    print("hash table launches", _native.hash_table_launches() - start)

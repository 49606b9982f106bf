"""A compiled function whose launches read graph inputs, each other's
outputs, transposed views and slices, views of other shapes over the same
bytes (a 3-D input read as a matrix), update an input in place and reuse
Inductor's buffers; called three times with an eager op in between.
Records to argv[1] with the default options, on the device argv[2]
(default cpu)."""

import sys

import torch
import tritontui

torch.set_num_threads(1)
torch.manual_seed(0)


@torch.compile
def step(
    x: torch.Tensor, w: torch.Tensor, acc: torch.Tensor, h: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    a = x @ w
    b = (a.relu() + 1).t()
    c = b @ w.t()
    acc.add_(c.sum(0))
    d = x[:, :16] * 2
    e = (h @ w).sigmoid().sum((0, 1))
    return (c.tanh() * d.sum()).sum(1) + e, acc


device = sys.argv[2] if len(sys.argv) > 2 else "cpu"
x, w = torch.randn(32, 32, device=device), torch.randn(32, 32, device=device)
acc = torch.zeros(32, device=device)
h = torch.randn(2, 16, 32, device=device)
with tritontui.record(sys.argv[1]):
    for _ in range(3):
        out, _ = step(x, w, acc, h)
        x = x + out[:, None]
    print(acc.sum().item())

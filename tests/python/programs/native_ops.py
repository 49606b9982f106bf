"""Eager ops of every kind of argument and result the native observer
reads without Python (numbers, wrapped numbers, strings, dtypes and
devices, lists of ints, of tensors and of optional tensors, out= results,
several results, a list of results, empty and 0-dim tensors, a backward
pass), and some it leaves to Python (a copy, a random op, numerics-
sensitive ops), recorded with the defaults:

    python native_ops.py --out TRACE [--device cuda]
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F
import tritontui


def ops(device: str) -> None:
    torch.manual_seed(0)
    x = torch.randn(4, 8, device=device, requires_grad=True)
    w = torch.randn(8, 8, device=device, requires_grad=True)
    y = torch.randn(4, 8, device=device)
    index = torch.arange(2, device=device) * 2
    out = torch.empty(4, 8, device=device)
    y.add_(1.5).mul_(2)
    c = y * y + 2
    torch.add(y, c, alpha=0.5, out=out)
    torch.cat([y, c], dim=0)
    torch.stack([y, c, out])
    c.amax(dim=[1], keepdim=True)
    torch.zeros(3, 4, dtype=torch.float16, device=device)
    torch.full((2, 3), 3.25, device=device)
    torch.where(y > 0, y, 0.25)
    torch.sort(y, dim=1, descending=True)
    torch.topk(y, 2)
    y.max(dim=1)
    F.gelu(y, approximate="tanh")
    F.layer_norm(y, [8])
    y[:, index]
    torch._foreach_add([y, c], 1.0)
    torch._foreach_mul_([y, out], 0.5)
    y.new_zeros(0).add_(1)
    torch.ones((), device=device).mul_(3)
    torch.clamp(y, min=-1.0)
    y.to(torch.float64)
    torch.rand(3, device=device)
    (x @ w).tanh().sum().backward()
    x.grad.add_(w.grad.sum(dim=0))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    with tritontui.record(args.out):
        ops(args.device)


if __name__ == "__main__":
    main()

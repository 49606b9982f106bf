"""Inductor's index_add on the GPU: a Triton kernel with tl.atomic_add,
whose float sums depend on the order the atomics land in; its result
feeds a few more kernels. Run as a program it records nothing itself
(``tritontui check`` records it); gpu_index_add.py records it."""

import torch

torch.manual_seed(0)
n, rows = 1 << 20, 256
src = torch.randn(n, 16, device="cuda")
index = torch.randint(0, rows, (n,), device="cuda")
weight = torch.randn(16, 16, device="cuda")


def step(src: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    acc = torch.zeros(rows, 16, device=src.device).index_add(0, index, src)
    h = torch.relu(acc * 0.5) @ weight
    return torch.softmax(h, dim=-1).sum(0)


if __name__ == "__main__":
    print(torch.compile(step)(src, index)[:2].tolist())

"""Two ranks under torchrun on the CPU (gloo): each runs a compiled step
on its own data and all-reduces the result."""

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
model = torch.compile(torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.GELU()))
y = model(torch.randn(8, 16)).sum(0)
dist.all_reduce(y)
print(rank, y.sum().item())
dist.destroy_process_group()

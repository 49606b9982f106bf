"""Two ranks under torchrun on the CPU (gloo): each runs a compiled step
on its own data and all-reduces the result, large enough that the
collective is still running when its op returns; prints the hash of what
the all-reduce left."""

import torch
import torch.distributed as dist
import tritontui

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
model = torch.compile(torch.nn.Sequential(torch.nn.Linear(16, 1 << 16), torch.nn.GELU()))
y = model(torch.randn(8, 16)).sum(0)
dist.all_reduce(y)
print("allreduced", rank, hex(tritontui.hash_tensor(y)), flush=True)
functional = torch.ops._c10d_functional
z = functional.wait_tensor(functional.all_reduce(y, "sum", dist.group.WORLD.group_name))
print("functional", rank, hex(tritontui.hash_tensor(z)), flush=True)
dist.destroy_process_group()

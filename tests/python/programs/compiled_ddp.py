"""DDP compiled the way torchtitan and most DDP users compile it,
``torch.compile(DistributedDataParallel(model))``: Dynamo's DDP optimizer
splits the model's graph into a submodule per 1 MB gradient bucket (two
here), and DDP's reducer all-reduces the buckets during backward. Two SGD steps
on each rank's own batches (rank 1's from another seed with
RANKS_VARIANT=1), on the CPU with gloo; prints each rank's last loss."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.set_num_threads(1)
torch.manual_seed(0)


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(256, 512)
        self.b = torch.nn.Linear(512, 512)
        self.c = torch.nn.Linear(512, 256)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gelu = torch.nn.functional.gelu
        return self.c(gelu(self.b(gelu(self.a(x)))))


model = MLP()
step = torch.compile(DistributedDataParallel(model, bucket_cap_mb=1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
variant = os.environ.get("RANKS_VARIANT") == "1" and rank == 1
batches = torch.Generator().manual_seed(100 + rank + (10 if variant else 0))
for _ in range(2):
    loss = step(torch.randn(16, 256, generator=batches)).square().mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
os.write(1, f"rank {rank} loss {loss.item():.6f}\n".encode())
dist.destroy_process_group()

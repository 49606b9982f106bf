"""A compiled model trained for 3 steps under DDP, or under FSDP2's
``fully_shard`` with FSDP=1, each rank on its own batches, with AdamW;
prints each rank's last loss. Runs on ``cuda:LOCAL_RANK % devices`` when
CUDA is there (two ranks may share one GPU with gloo), else on the CPU;
the backend is DDP_BACKEND (default gloo). With RANKS_VARIANT=1, rank 1's
batches come from another seed."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group(os.environ.get("DDP_BACKEND", "gloo"))
rank = dist.get_rank()
if torch.cuda.is_available():
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
    torch.cuda.set_device(device)
else:
    device = torch.device("cpu")
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)
).to(device)
if os.environ.get("FSDP"):
    from torch.distributed.fsdp import fully_shard

    for layer in model:
        if any(True for _ in layer.parameters()):
            fully_shard(layer)
    wrapped = fully_shard(model)
else:
    # The model compiled inside DDP, whose reducer all-reduces the
    # gradients in 1 MB buckets (a bucket per layer) during backward.
    wrapped = DistributedDataParallel(
        torch.compile(model),
        device_ids=[device.index] if device.type == "cuda" else None,
        bucket_cap_mb=1,
    )
step = wrapped if not os.environ.get("FSDP") else torch.compile(wrapped)
optimizer = torch.optim.AdamW(wrapped.parameters(), lr=1e-2)
variant = os.environ.get("RANKS_VARIANT") == "1" and rank == 1
batches = torch.Generator().manual_seed(100 + rank + (10 if variant else 0))
for _ in range(3):
    x = torch.randn(32, 256, generator=batches).to(device)
    loss = step(x).square().mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
os.write(1, f"rank {rank} loss {loss.item():.6f}\n".encode())
dist.destroy_process_group()

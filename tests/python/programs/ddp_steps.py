"""Two ranks under torchrun (gloo on the CPU; with DEVICE=cuda, NCCL,
one GPU each) train a compiled MLP under DDP with AdamW for STEPS steps
(8), each on its own batches drawn on the host; from step NOISY (-1:
never) rank 1's batches pick up noise from a generator seeded by the
clock, as a data loader gone wrong on one rank would. Recorded by
``TRITONTUI_RECORD`` (``tritontui check`` runs it); prints each rank's
last loss."""

import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

STEPS = int(os.environ.get("STEPS", "8"))
NOISY = int(os.environ.get("NOISY", "-1"))

DEVICE = os.environ.get("DEVICE", "cpu")

if DEVICE == "cuda":
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(device)
else:
    device = torch.device("cpu")
dist.init_process_group("nccl" if DEVICE == "cuda" else "gloo")
torch.set_num_threads(1)
rank = dist.get_rank()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 32))
ddp = DistributedDataParallel(
    torch.compile(model.to(device)), device_ids=[device.index] if DEVICE == "cuda" else None
)
optimizer = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
batches = torch.Generator().manual_seed(100 + rank)
clock = torch.Generator().manual_seed(time.time_ns())
for step in range(STEPS):
    x = torch.randn(16, 32, generator=batches)
    if rank == 1 and step >= NOISY >= 0:
        x = x + 1e-3 * torch.randn(16, 32, generator=clock)
    loss = ddp(x.to(device)).square().mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
print(f"rank {rank}: loss {loss.item()}")
dist.destroy_process_group()

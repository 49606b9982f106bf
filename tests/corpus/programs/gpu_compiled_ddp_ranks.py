"""Two ranks under torchrun, one GPU each (NCCL), train an MLP compiled
the way most DDP users compile it, ``torch.compile(DistributedDataParallel(
model))``: Dynamo's DDP optimizer splits the graph into a submodule per
1 MB gradient bucket, and DDP's reducer all-reduces the gradients during
backward (one bucket in the first step, rebuilt ones after). Two SGD
steps on each rank's own batches, drawn on the host; run B gives rank 1
other batches. Rank 0's trace is the pair's (rank 1's is dropped): its
inputs are equal, its gradients come from the all-reduces. Run without
torchrun, the program starts torchrun on itself."""

import torch
import tritontui
from _harness import gpu_rank, keep_rank_zero, parse, recording, state, under_torchrun
from _ranks import MLP, train

args = parse(__doc__, variant="rank 1 trains on other batches")
under_torchrun()

import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402

rank, device = gpu_rank()
torch.manual_seed(0)


model = MLP().to(device)
step = torch.compile(DistributedDataParallel(model, device_ids=[device.index], bucket_cap_mb=1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = torch.Generator().manual_seed(100 + rank + (10 if args.variant and rank == 1 else 0))
# Each rank records into its own trace (the path has {rank}); rank 0's
# becomes --out.
with recording(args.out + ".rank{rank}"):
    loss = train(step, optimizer, batches, steps=2, rows=16, device=device, set_to_none=False)
    torch.cuda.synchronize()
results = {**state(model), "loss": loss.detach()}
fingerprint = {name: f"{tritontui.hash_tensor(t.detach()):016x}" for name, t in results.items()}
dist.destroy_process_group()
keep_rank_zero(args, rank, fingerprint)

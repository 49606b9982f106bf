"""Two ranks under torchrun, one GPU each (NCCL), train a compiled MLP for
three steps under FSDP2 (``fully_shard``) with AdamW, each on its own
batches drawn on the host. Run B gives rank 1 other batches; rank 0's
trace is the pair's (rank 1's is dropped): its inputs are equal, its
gradient shards come from the reduce-scatters, its parameters from them.
Run without torchrun, the program starts torchrun on itself."""

import torch
import tritontui
from _harness import gpu_rank, keep_rank_zero, parse, recording, under_torchrun
from _ranks import sharded_mlp, train

args = parse(__doc__, variant="rank 1 trains on other batches")
under_torchrun()

import torch.distributed as dist  # noqa: E402

rank, device = gpu_rank()
torch.manual_seed(0)
model = sharded_mlp(device)
step = torch.compile(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
batches = torch.Generator().manual_seed(100 + rank + (10 if args.variant and rank == 1 else 0))
# Each rank records into its own trace (the path has {rank}); rank 0's
# becomes --out.
with recording(args.out + ".rank{rank}"):
    loss = train(step, optimizer, batches, steps=3, rows=32, device=device)
    shards = {name: p.to_local().detach().clone() for name, p in model.named_parameters()}
    torch.cuda.synchronize()
dist.destroy_process_group()
fingerprint = {name: f"{tritontui.hash_tensor(t):016x}" for name, t in shards.items()}
fingerprint["loss"] = f"{tritontui.hash_tensor(loss.detach()):016x}"
keep_rank_zero(args, rank, fingerprint)

"""Two ranks under torchrun on the CPU (gloo) train an MLP compiled the
way most DDP users compile it, ``torch.compile(DistributedDataParallel(
model))``: Dynamo's DDP optimizer splits the graph into a submodule per
1 MB gradient bucket (two), and DDP's reducer all-reduces the gradients
during backward (one bucket in the first step, three rebuilt ones in the
second).
Two SGD steps on each rank's own batches; run B gives rank 1 other
batches. Rank 0's trace is the pair's (rank 1's is dropped): its inputs
are equal, its gradients come from the all-reduces. It caught the
recorder making Dynamo trace into it (a graph break the program has
not) and stopping on an internal error before the first all-reduce.
Run without torchrun, the program starts torchrun on itself."""

import torch
import tritontui
from _harness import gloo_rank, keep_rank_zero, parse, recording, state, under_torchrun
from _ranks import MLP, train

args = parse(__doc__, variant="rank 1 trains on other batches")
under_torchrun()

from torch.nn.parallel import DistributedDataParallel  # noqa: E402

rank = gloo_rank()
torch.manual_seed(0)


model = MLP()
step = torch.compile(DistributedDataParallel(model, bucket_cap_mb=1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = torch.Generator().manual_seed(100 + rank + (10 if args.variant and rank == 1 else 0))
# Each rank records into its own trace (the path has {rank}); rank 0's
# becomes --out.
with recording(args.out + ".rank{rank}"):
    loss = train(step, optimizer, batches, steps=2, rows=16, set_to_none=False)
results = {**state(model), "loss": loss.detach()}
fingerprint = {name: f"{tritontui.hash_tensor(t.detach()):016x}" for name, t in results.items()}
torch.distributed.destroy_process_group()
keep_rank_zero(args, rank, fingerprint)

"""Two ranks under torchrun on the CPU (gloo) train the MLP of
compiled_ddp_ranks, ``torch.compile(DistributedDataParallel(model))``,
for three SGD steps, recorded as fingerprints only; run B gives rank 1
other batches. Rank 0's trace is the pair's (rank 1's is dropped): its
inputs and its first graph calls are equal, and the first fingerprint
that differs is the first backward's all-reduce, at step 0. Run without
torchrun, the program starts torchrun on itself."""

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
with recording(args.out + ".rank{rank}", fingerprint=True):
    loss = train(step, optimizer, batches, steps=3, rows=16, set_to_none=False)
results = {**state(model), "loss": loss.detach()}
fingerprint = {name: f"{tritontui.hash_tensor(t.detach()):016x}" for name, t in results.items()}
torch.distributed.destroy_process_group()
keep_rank_zero(args, rank, fingerprint)

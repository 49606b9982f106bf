"""Two ranks under torchrun on the CPU (gloo): a compiled op on each
rank's data, an all-reduce of its result, the compiled op again. Run B
gives rank 1 other data; rank 0's trace is the pair's (rank 1's is
dropped). Run without torchrun, the program starts torchrun on itself."""

import torch
import tritontui
from _harness import gloo_rank, keep_rank_zero, parse, recording, under_torchrun

args = parse(__doc__, variant="rank 1 starts from other data")
under_torchrun()

import torch.distributed as dist  # noqa: E402

rank = gloo_rank()
torch.manual_seed(rank + (10 if args.variant and rank == 1 else 0))
x = torch.randn(1 << 22)
f = torch.compile(lambda t: (t * 2).sin())
# Each rank records into its own trace (the path has {rank}); rank 0's
# becomes --out.
with recording(args.out + ".rank{rank}"):
    y = f(x)
    dist.all_reduce(y)
    z = f(y)
dist.destroy_process_group()
keep_rank_zero(args, rank, {"z": f"{tritontui.hash_tensor(z):016x}"})

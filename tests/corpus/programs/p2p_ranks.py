"""Two ranks under torchrun on the CPU (gloo), as two pipeline stages:
rank 1 runs a compiled op on its data and sends the result to rank 0;
rank 0 starts receiving it (``irecv``), runs the compiled op on its own
data meanwhile, waits, and combines the two. Run B gives rank 1 other
data; rank 0's trace is the pair's (rank 1's is dropped). Run without
torchrun, the program starts torchrun on itself."""

import torch
import tritontui
from _harness import gloo_rank, keep_rank_zero, parse, recording, under_torchrun

args = parse(__doc__, variant="rank 1 starts from other data")
under_torchrun()

import torch.distributed as dist  # noqa: E402

rank = gloo_rank()
torch.manual_seed(rank + (10 if args.variant and rank == 1 else 0))
x = torch.randn(1 << 20)
f = torch.compile(lambda t: (t * 2).sin())
g = torch.compile(lambda a, b: (a + b).cos())
# Each rank records into its own trace (the path has {rank}); rank 0's
# becomes --out.
with recording(args.out + ".rank{rank}"):
    if rank == 1:
        dist.send(f(x), 0)
    else:
        received = torch.empty_like(x)
        request = dist.irecv(received, 1)
        own = f(x)
        request.wait()
        z = g(own, received)
dist.destroy_process_group()
keep_rank_zero(args, rank, {"z": f"{tritontui.hash_tensor(z):016x}"} if rank == 0 else {})

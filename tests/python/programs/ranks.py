"""Two ranks under torchrun on the CPU (gloo): each runs a compiled step
on its own data and all-reduces the result, large enough that the
collective is still running when its op returns, then all-reduces it
again as compiled graphs do (a functional collective and its
``wait_tensor``) and all-gathers a list; prints the hashes of what each
all-reduce left; then exchanges the result with the other rank, each
receiving before it sends. It makes a second process group, which it
never uses. With RANKS_VARIANT=1, rank 1 starts from other data; with
RANKS_VARIANT=max, rank 1 all-reduces with MAX where rank 0 sums (gloo
runs it, both ranks ending with the same wrong values). Then rank 0 sends
once more and rank 1 receives from any source, waiting with the blocking
``recv``; each prints what it sent and received."""

import os

import torch
import torch.distributed as dist
import tritontui

dist.init_process_group("gloo")
rank = dist.get_rank()
# A group made and never used: recorded, and listed by `tritontui ranks`.
dist.new_group([0, 1], group_desc="spare")
variant = os.environ.get("RANKS_VARIANT") if rank == 1 else None
torch.manual_seed(rank + (10 if variant == "1" else 0))
model = torch.compile(torch.nn.Sequential(torch.nn.Linear(16, 1 << 16), torch.nn.GELU()))
y = model(torch.randn(8, 16)).sum(0)
dist.all_reduce(y, op=dist.ReduceOp.MAX if variant == "max" else dist.ReduceOp.SUM)


def say(what: str, tensor: torch.Tensor) -> None:
    # One write per line: the two ranks share the launcher's stdout.
    os.write(1, f"{what} {rank} {tritontui.hash_tensor(tensor):#x}\n".encode())


say("allreduced", y)
functional = torch.ops._c10d_functional
z = functional.wait_tensor(functional.all_reduce(y, "sum", dist.group.WORLD.group_name))
say("functional", z)
# An all-gather of tensor lists: each rank's piece checked by `ranks`.
pieces = [torch.empty(4) for _ in range(2)]
dist.all_gather(pieces, z[:4] + rank)
# A point-to-point exchange in which each rank receives before it sends:
# the recorder must not wait for the receive.
received = torch.empty_like(z)
request = dist.irecv(received, 1 - rank)
dist.send(z, 1 - rank)
request.wait()
say("received", received)
if rank == 0:
    dist.send(received * 2, 1)
else:
    from_any = torch.empty_like(received)
    dist.recv(from_any)
    say("received_any", from_any)
dist.destroy_process_group()

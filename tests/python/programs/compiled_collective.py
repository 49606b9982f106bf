"""Two ranks under torchrun on the CPU (gloo): a compiled graph that
all-reduces inside it (a functional collective, which Inductor calls as
``_c10d_functional.all_reduce_`` and ``wait_tensor`` between its
kernels), each rank on its own data."""

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

dist.init_process_group("gloo")
torch.manual_seed(dist.get_rank())
step = torch.compile(lambda t: funcol.all_reduce(t.sin() * 2, "sum", dist.group.WORLD).cos())
step(torch.randn(1024))
dist.destroy_process_group()

"""A compiled function that waits for an asynchronous all-reduce and reads
its result to the host: Dynamo breaks the graph at the collective, at
``Work.wait`` and at ``tolist``, and runs them eagerly. One gloo rank.
The recorder's ``Work.wait`` was a Python function, which Dynamo tried to
inline: the same break, for another reason, after more frames."""

import torch
import torch.distributed as dist

dist.init_process_group("gloo", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)


@torch.compile
def f(x: torch.Tensor) -> torch.Tensor:
    work = dist.all_reduce(x, async_op=True)
    work.wait()
    return torch.tensor(x.tolist()) * 2


x = torch.arange(4.0)
print(f(f(x)).sum().item())
dist.destroy_process_group()

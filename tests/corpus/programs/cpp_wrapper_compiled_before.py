"""A compiled index_add with colliding indices on two threads, compiled
with ``torch._inductor.config.cpp_wrapper = True`` and called once before
recording starts: its C++ wrapper was generated without the recorder's
hooks, so while recording it launches its kernels unseen, and the trace
records the graph's inputs and its output at the end, not its launches.
The output differs between the runs (atomic adds); the program keeps it,
and no recorded launch reads it: only the results show the difference."""

import torch
import torch._inductor.config
from _harness import parse, run

torch._inductor.config.cpp_wrapper = True
args = parse(__doc__)
torch.manual_seed(0)
n = 1 << 20
src = torch.randn(n)
index = torch.randint(0, 64, (n,))
f = torch.compile(lambda src, index: torch.zeros(64).index_add(0, index, src) * 2)
torch.set_num_threads(2)
f(src, index)


def main() -> dict[str, torch.Tensor]:
    return {"added": f(src, index)}


run(args, main)

"""A compiled index_add with colliding indices on two threads, compiled
with ``torch._inductor.config.cpp_wrapper = True`` while recording: its C++
wrapper calls the recorder around each launch. The output differs
between the runs (atomic adds), and the C++ kernel that adds is the
root cause."""

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


def main() -> dict[str, torch.Tensor]:
    return {"added": f(src, index)}


run(args, main)

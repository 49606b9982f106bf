"""A compiled pointwise function; with --variant Inductor's C++ vector
length is set to 1 (torch._inductor.config.cpp.simdlen), so the kernel of
the same name is generated without vectorization and its sin rounds
differently: two versions of a training config would differ so."""

import torch
from _harness import parse, run

args = parse(__doc__, variant="compile with torch._inductor.config.cpp.simdlen = 1")
if args.variant:
    torch._inductor.config.cpp.simdlen = 1
f = torch.compile(lambda t: (t * 2).sin() / (t + 3))
x = torch.linspace(-3, 3, 1000)


def main() -> dict[str, torch.Tensor]:
    return {"y": f(x)}


run(args, main, threads=1)

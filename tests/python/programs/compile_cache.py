"""Compiles one graph with a Python wrapper twice in one process,
resetting Dynamo between: first unrecorded, then while recording (as a
recompile after recording began does). Prints, per compile, whether
Inductor's caches served it (the FX-graph cache, or AOTAutograd's, which
serves the FX graph it holds), as JSON lines."""

import json
import sys

import torch
import tritontui
from torch._dynamo.utils import counters


def served() -> int:
    fx_graphs = counters["inductor"]["fxgraph_cache_hit"]
    return fx_graphs + counters["aot_autograd"]["autograd_cache_hit"]


x = torch.randn(1024)
for i, recorded in enumerate((False, True)):
    torch._dynamo.reset()
    before = served()
    f = torch.compile(lambda x: (x * 2).sin())
    if recorded:
        with tritontui.record(f"{sys.argv[1]}.{i}.msgpack"):
            f(x)
    else:
        f(x)
    print(json.dumps({"recorded": recorded, "served": served() > before}))

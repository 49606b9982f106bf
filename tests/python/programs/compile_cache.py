"""Compiles one graph several times in one process, resetting Dynamo
between, each time recorded or not as ORDER says (``r`` recorded, ``u``
unrecorded: ``rur``), with a C++ wrapper when ``cpp_wrapper`` follows.
Prints, per compile, whether Inductor's caches served it (the FX-graph
cache, or AOTAutograd's, which serves the FX graph it holds) and whether
its code calls the recorder's C++ hooks, as JSON lines.

    python compile_cache.py TRACE_PREFIX ORDER [cpp_wrapper]
"""

import json
import sys

import torch
import torch._inductor.config
import tritontui
from torch._dynamo.utils import counters
from torch._inductor.output_code import CompiledFxGraph

prefix, order = sys.argv[1:3]
torch._inductor.config.cpp_wrapper = sys.argv[3:] == ["cpp_wrapper"]
sources: list[str] = []
original = CompiledFxGraph.__call__


def call(self, inputs):
    sources.append(self.source_code)
    return original(self, inputs)


def served() -> int:
    fx_graphs = counters["inductor"]["fxgraph_cache_hit"]
    return fx_graphs + counters["aot_autograd"]["autograd_cache_hit"]


CompiledFxGraph.__call__ = call
x = torch.randn(1024)
for i, mode in enumerate(order):
    torch._dynamo.reset()
    before = served()
    f = torch.compile(lambda x: (x * 2).sin())
    if mode == "r":
        with tritontui.record(f"{prefix}.{i}.msgpack"):
            f(x)
    else:
        f(x)
    print(
        json.dumps(
            {
                "recorded": mode == "r",
                "served": served() > before,
                "hooked": "tritontui_launch(" in sources[-1],
            }
        )
    )

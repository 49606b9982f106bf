"""Compiles one cpp_wrapper graph three times in one process, resetting
Dynamo between: while recording, without, and while recording again.
Prints, per compile, whether the FX-graph cache served it and whether its
C++ calls the recorder's hooks, as JSON lines."""

import json
import sys

import torch
import torch._inductor.config
import tritontui
from torch._dynamo.utils import counters
from torch._inductor.output_code import CompiledFxGraph

torch._inductor.config.cpp_wrapper = True
sources: list[str] = []
original = CompiledFxGraph.__call__


def call(self, inputs):
    sources.append(self.source_code)
    return original(self, inputs)


CompiledFxGraph.__call__ = call
x = torch.randn(1024)
for i, recorded in enumerate((True, False, True)):
    torch._dynamo.reset()
    hits = counters["inductor"]["fxgraph_cache_hit"]
    f = torch.compile(lambda x: (x * 2).sin())
    if recorded:
        with tritontui.record(f"{sys.argv[1]}.{i}.msgpack"):
            f(x)
    else:
        f(x)
    hit = counters["inductor"]["fxgraph_cache_hit"] > hits
    print(
        json.dumps({"recorded": recorded, "hit": hit, "hooked": "tritontui_launch(" in sources[-1]})
    )

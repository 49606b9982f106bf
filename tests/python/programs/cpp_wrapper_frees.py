"""A cpp_wrapper graph called again and again while recording. The tensors
the recorder makes of the wrapper's handles must die with each launch, or
every buffer the graph allocates stays alive. Prints the number of live
tensors after each call."""

import gc
import json
import sys

import torch
import torch._inductor.config
import tritontui


def live_tensors() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, torch.Tensor))


torch._inductor.config.cpp_wrapper = True
x, w = torch.randn(64, 32), torch.randn(32, 16)
with tritontui.record(sys.argv[1]):
    # Compiled while recording: the graph carries the recorder's hooks.
    f = torch.compile(lambda x, w: torch.sort((x @ w).relu(), dim=0).values.sin())
    f(x, w)
    counts = []
    for _ in range(4):
        f(x, w)
        counts.append(live_tensors())
print(json.dumps(counts))

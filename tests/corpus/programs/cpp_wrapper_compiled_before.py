"""A compiled index_add with colliding indices on two threads, compiled
with ``torch._inductor.config.cpp_wrapper = True`` and called once before
recording starts: its C++ wrapper was generated without the recorder's
hooks, so while recording it launches its kernels unseen, and the trace
records the graph's inputs and its output at the end, not its launches.
The output differs between the runs (atomic adds); the program keeps it,
and no recorded launch reads it: only the results show the difference."""

import torch
from _cpp_index_add import compiled_index_add
from _harness import parse, run

args = parse(__doc__)
added = compiled_index_add()
torch.set_num_threads(2)
added()
run(args, lambda: {"added": added()})

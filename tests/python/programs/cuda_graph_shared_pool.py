"""The corpus's two CUDA graphs of one memory pool
(``tests/corpus/programs/_shared_pool``) recorded into a trace in the
mode given (graphed, ungraphed). Prints whether graph 2's output took
graph 1's freed memory and the hash of the stacked outputs."""

import sys
from pathlib import Path

import tritontui

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "corpus" / "programs"))
from _shared_pool import shared_pool

trace, mode = sys.argv[1:3]
main, seen = shared_pool(mode)
with tritontui.record(trace):
    results = main()
print(f"reused {seen['reused']}")
print(f"stacked {tritontui.hash_tensor(results['stacked']):016x}")

"""The corpus's kept CUDA graph output (``tests/corpus/programs/_kept_output``)
recorded into a trace in the mode given (graphed, cloned, ungraphed).
Prints the hash of the stacked outputs."""

import sys
from pathlib import Path

import tritontui

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "corpus" / "programs"))
from _kept_output import kept_outputs

trace, mode = sys.argv[1:3]
main = kept_outputs(mode)
with tritontui.record(trace):
    results = main()
print(f"stacked {tritontui.hash_tensor(results['stacked']):016x}")

"""The corpus's CUDA graph tree training (``tests/corpus/programs/_graphed``)
recorded into a trace: ``--atomic`` pools by an atomic index_add,
``--ungraphed`` compiles it without CUDA graphs. Prints the number of
CUDA graph replays torch made (counted by wrapping ``CUDAGraph.replay``
before recording starts), the hash kernels the recorder ran beside the
graphs' launches, and the hash of the losses."""

import argparse
import sys
from pathlib import Path

import tritontui
from _replays import count_replays
from tritontui import _native

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "corpus" / "programs"))
from _graphed import graphed_training

parser = argparse.ArgumentParser()
parser.add_argument("trace")
parser.add_argument("--atomic", action="store_true")
parser.add_argument("--ungraphed", action="store_true")
args = parser.parse_args()

replays = count_replays()
main = graphed_training(args.atomic, mode=None if args.ungraphed else "reduce-overhead")
with tritontui.record(args.trace):
    results = main()
print(f"replays {replays['replays']}")
print(f"hash kernels beside {_native.hash_table_launches_beside()}")
print(f"losses {tritontui.hash_tensor(results['loss']):016x}")

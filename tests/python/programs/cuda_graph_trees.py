"""The corpus's CUDA graph tree training (``tests/corpus/programs/_graphed``)
recorded into a trace: ``--atomic`` pools by an atomic index_add,
``--ungraphed`` compiles it without CUDA graphs. Prints the number of
CUDA graph replays torch made (counted by wrapping ``CUDAGraph.replay``
before recording starts), the hash kernels the recorder ran beside the
graphs' launches, and the hash of the losses."""

import argparse
import sys
from pathlib import Path

import torch
import tritontui
from tritontui import _native

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "corpus" / "programs"))
from _graphed import graphed_training

parser = argparse.ArgumentParser()
parser.add_argument("trace")
parser.add_argument("--atomic", action="store_true")
parser.add_argument("--ungraphed", action="store_true")
args = parser.parse_args()

replays = 0
replay = torch.cuda.CUDAGraph.replay


def counted(self: torch.cuda.CUDAGraph) -> None:
    global replays
    replays += 1
    replay(self)


torch.cuda.CUDAGraph.replay = counted
main = graphed_training(args.atomic, mode=None if args.ungraphed else "reduce-overhead")
with tritontui.record(args.trace):
    results = main()
print(f"replays {replays}")
print(f"hash kernels beside {_native.hash_table_launches_beside()}")
print(f"losses {tritontui.hash_tensor(results['loss']):016x}")

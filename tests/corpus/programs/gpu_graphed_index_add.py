"""A residual MLP compiled with mode="reduce-overhead" and trained with
Adam for four steps under CUDA graph trees, the forward's pooling an
atomic index_add inside the graph: its sums differ run to run, in the
warm-up step and in every replay of the forward graph."""

from _graphed import graphed_training
from _harness import parse, run

run(parse(__doc__), graphed_training(atomic=True))

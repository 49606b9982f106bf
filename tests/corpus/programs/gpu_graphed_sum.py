"""A residual MLP compiled with mode="reduce-overhead" and trained with
Adam for four steps under CUDA graph trees, the forward's pooling a sum
over a view (no atomics): every replay is the same in both runs."""

from _graphed import graphed_training
from _harness import parse, run

run(parse(__doc__), graphed_training(atomic=False))

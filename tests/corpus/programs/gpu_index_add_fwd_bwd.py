"""index_add_fwd_bwd on a GPU: a compiled forward and backward whose
forward has an atomic index_add (65,536 rows into 16 bins, a Triton
atomic_add): its result is saved for the backward pass, which reads it
through a transposed view in a matmul."""

from _harness import parse, run
from _index_add import forward_backward

run(parse(__doc__), forward_backward(scale=1e-3, device="cuda"))

"""Two CUDA graphs captured from one memory pool and replayed in another
order than captured (run A), against the same steps without graphs (run
B, --variant): graph 1's replay overwrites the output of graph 2 the
program kept. The engine aligned graph 2's kernel with nothing (the
graphs' allocations, made once at capture, pulled the alignment out of
place), called the capture's own fill_ a structural root cause reaching
the results, and the kept output a root cause of its own."""

from _harness import parse, run
from _shared_pool import shared_pool

args = parse(__doc__, variant="run the steps without CUDA graphs")
main, seen = shared_pool("ungraphed" if args.variant else "graphed")
run(args, main)
assert args.variant or seen["reused"], "graph 2's output did not take graph 1's freed memory"

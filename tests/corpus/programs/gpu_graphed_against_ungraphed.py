"""The CUDA graph tree training of gpu_graphed_sum (no atomics) in run A,
and the same program compiled without CUDA graphs in run B (--variant):
the same kernels and the same results bit for bit, but run A captures its
graphs (allocating their static buffers, copying inputs into them) and
replays them, while run B launches every kernel itself."""

from _graphed import graphed_training
from _harness import parse, run

args = parse(__doc__, variant="compile without CUDA graphs")
run(args, graphed_training(atomic=False, mode=None if args.variant else "reduce-overhead"))

"""A hand-written CUDA graph's output kept across replays without a clone
(run A), against the same steps run without the graph (run B,
--variant): run A's stacked outputs are the last replay's three times.
The engine said the stack's input was written by a launch "whose output
was the same in both runs: something outside the recorded region changed
it afterwards", when a later replay of the graph had overwritten it."""

from _harness import parse, run
from _kept_output import kept_outputs

args = parse(__doc__, variant="run the steps without a CUDA graph")
run(args, kept_outputs("ungraphed" if args.variant else "graphed"))

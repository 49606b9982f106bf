"""The same 2,000 steps (``_long_run_gpu``) recorded as fingerprints until
step 1,499 begins and in full through step 1,500, as ``check --steps``
records them: the compiled index_add of step 1,500 is the root cause."""

from _harness import parse, run
from _long_run_gpu import COLLIDING_FROM, train_long

args = parse(__doc__)
run(args, train_long, options={"from_step": COLLIDING_FROM - 1, "to_step": COLLIDING_FROM})

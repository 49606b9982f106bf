"""The same 500 steps (``_long_run``) recorded as fingerprints until step
399 begins and in full through step 400 (``from_step=399, to_step=400``),
as ``check --steps`` records them: the clock-seeded draw of step 400 is
the root cause."""

from _harness import parse, run
from _long_run import NOISY_STEP, train_long

args = parse(__doc__)
run(args, train_long, options={"from_step": NOISY_STEP - 1, "to_step": NOISY_STEP})

"""500 steps of a compiled MLP recorded as fingerprints only
(``fingerprint=True``), whose batch at step 400 picks up clock-seeded
noise (``_long_run``): the fingerprints first differ at step 400, at its
first graph call."""

from _harness import parse, run
from _long_run import train_long

args = parse(__doc__)
run(args, train_long, options={"fingerprint": True})

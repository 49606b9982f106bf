"""2,000 steps of a small GPT on a GPU recorded as fingerprints only
(``_long_run_gpu``), whose data path's index_add starts summing colliding
rows with atomic adds at step 1,500: the fingerprints first differ there,
at the forward's graph call."""

from _harness import parse, run
from _long_run_gpu import train_long

args = parse(__doc__)
run(args, train_long, options={"fingerprint": True})

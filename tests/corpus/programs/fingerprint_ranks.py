"""compiled_ddp_ranks (two gloo ranks under torchrun training
``torch.compile(DistributedDataParallel(model))`` for two SGD steps; run
B gives rank 1 other batches) recorded as fingerprints only, as
``TRITONTUI_FINGERPRINT=1`` asks. Rank 0's inputs and its first graph
calls are equal, and the first fingerprint that differs is the first
backward's all-reduce, at step 0."""

import os
import runpy
from pathlib import Path

os.environ["TRITONTUI_FINGERPRINT"] = "1"
runpy.run_path(str(Path(__file__).with_name("compiled_ddp_ranks.py")), run_name="__main__")

"""Inductor's probe of a dtype's size (``get_dtype_size``, which makes a
0-dim tensor) called while recording, as the first call of a CUDA graph
tree loaded from Inductor's cache calls it, beside a 0-dim empty tensor
the program makes itself."""

import sys

import torch
import tritontui
from torch._inductor.utils import get_dtype_size

get_dtype_size.cache_clear()
with tritontui.record(sys.argv[1]):
    assert get_dtype_size(torch.float64) == 8
    torch.empty((), dtype=torch.float16)

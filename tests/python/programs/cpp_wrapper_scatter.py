"""An atomic index_add on two threads compiled with cpp_wrapper: its
launches run past every hook, and its result may differ from run to run."""

import torch
import torch._inductor.config

torch._inductor.config.cpp_wrapper = True
torch.set_num_threads(2)
torch.manual_seed(0)
n = 1 << 20
src, index = torch.randn(n), torch.randint(0, 64, (n,))
f = torch.compile(lambda src, index: torch.zeros(64).index_add(0, index, src) * 2)
out = f(src, index)

"""A compiled atomic index_add on two threads whose results leave the
tensors: the program keeps no tensor, only a Python float (``.item()``)
and a list (``.tolist()``), which it prints. What the host read is the
program's result."""

import torch
from _harness import parse, recording, write_fingerprint

args = parse(__doc__)
torch.set_num_threads(2)
torch.manual_seed(0)
n = 1 << 20
src, index = torch.randn(n), torch.randint(0, 64, (n,))
f = torch.compile(lambda src, index: torch.zeros(64).index_add(0, index, src) * 2)
with recording(args.out):
    total = f(src, index).sum().item()
    first = f(src, index)[:4].tolist()
print(total, first)
write_fingerprint(args, {"total": total.hex(), "first": ",".join(v.hex() for v in first)})

"""An atomic index_add compiled on the GPU whose output the program
copies to the host (``.cpu()``), digests there and drops: no tensor the
difference reaches is alive at the end, only the bytes the host read show
it. Before a device-to-host copy counted as a host read, the copy was
called absorbed and the pair benign although the digests differ."""

import hashlib

import torch
from _harness import parse, recording, write_fingerprint

args = parse(__doc__)
torch.manual_seed(0)
n = 1 << 20
src = torch.randn(n, device="cuda")
index = torch.randint(0, 64, (n,), device="cuda")
f = torch.compile(lambda src, index: torch.zeros(64, device="cuda").index_add(0, index, src))
with recording(args.out):
    host = f(src, index).cpu()
    digest = hashlib.sha256(host.numpy().tobytes()).hexdigest()
    del host
print(digest)
write_fingerprint(args, {"host": digest})

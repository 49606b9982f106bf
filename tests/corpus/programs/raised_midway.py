"""A compiled MLP trained four SGD steps. Run B raises
``torch.OutOfMemoryError`` as its step 2 begins (as a run that ran out of
device memory does), out of the recorded block; the program catches it
after recording stopped and fingerprints what it has: B's parameters
after two steps, A's after four."""

import torch
from _harness import fingerprint, parse, recording, state, write_fingerprint

args = parse(__doc__, variant="raise as step 2 begins")
torch.set_num_threads(2)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
compiled = torch.compile(model)
x = torch.randn(16, 32, generator=torch.Generator().manual_seed(1))

try:
    with recording(args.out):
        for step in range(4):
            if step == 2 and args.variant:
                raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")
            compiled(x).square().mean().backward()
            optimizer.step()
            optimizer.zero_grad()
except torch.OutOfMemoryError:
    pass
write_fingerprint(args, fingerprint(state(model, optimizer)))

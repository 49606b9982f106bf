"""Eager training steps of a small MLP with AdamW (single-tensor on the
host, foreach on a GPU) and SGD with momentum, then a step of an
optimizer of our own that writes its parameter where dispatch modes are
kept out (no op is recorded) between two recorded ops.
Records to argv[1] with the default options, on the device argv[2]
(default cpu)."""

import sys

import torch
import tritontui

torch.set_num_threads(1)
torch.manual_seed(0)


class WritesUnseen(torch.optim.Optimizer):
    """Doubles its parameter, adds `[5, 6, 7, 8]` (made by `torch.tensor`)
    to it with dispatch modes kept out, then adds 1."""

    def __init__(self, params) -> None:
        super().__init__(params, {})

    @torch.no_grad()
    def step(self, closure=None) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                p.mul_(2)
                new = torch.tensor([5.0, 6.0, 7.0, 8.0], device=p.device)
                with torch._C._DisableTorchDispatch():
                    p.add_(new)
                p.add_(1)


device = sys.argv[2] if len(sys.argv) > 2 else "cpu"
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).to(
    device
)
optimizers = [
    torch.optim.AdamW(model.parameters(), lr=1e-2),
    torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9),
]
x = torch.randn(8, 16, device=device)
extra = torch.zeros(4, device=device)
own = WritesUnseen([extra])
with tritontui.record(sys.argv[1]):
    for optimizer in optimizers:
        for _ in range(2):
            optimizer.zero_grad()
            model(x).square().mean().backward()
            optimizer.step()
    own.step()
    print(model(x).sum().item(), extra.tolist())

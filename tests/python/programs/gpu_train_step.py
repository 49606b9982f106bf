"""The train step of train_step.py on the GPU (argv[1]: trace, or "-")."""

import sys

import torch
import tritontui

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.LayerNorm(512), torch.nn.Linear(512, 64)
).cuda()
x = torch.randn(1024, 256, device="cuda")
step = torch.compile(model)


def run() -> None:
    out = torch.softmax(step(x), dim=-1)
    (out * torch.arange(64.0, device="cuda")).sum().backward()


run()  # compile and autotune outside the recorded region
if sys.argv[1] != "-":
    with tritontui.record(sys.argv[1]):
        run()
torch.cuda.synchronize()
print("done")

"""Records launches until killed: for the crash test."""

import sys

import torch
import tritontui

f = torch.compile(lambda x: (x * 3).sin() + 1)
x = torch.randn(256)
f(x)
tritontui.start(sys.argv[1], aten=False)
print("recording", flush=True)
while True:
    x = f(x)

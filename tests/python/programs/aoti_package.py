"""A small model compiled ahead of time with AOTInductor into a package,
loaded and called while recording: its launches run in C++, unseen."""

import sys

import torch
import tritontui

out, package = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
x = torch.randn(8, 16)
with torch.no_grad():
    path = torch._inductor.aoti_compile_and_package(
        torch.export.export(model, (x,)), package_path=package
    )
    loaded = torch._inductor.aoti_load_package(path)
    with tritontui.record(out):
        y = loaded(x)
print(float(y.sum()))

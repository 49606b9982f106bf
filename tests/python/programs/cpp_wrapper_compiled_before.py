"""A cpp_wrapper graph compiled and called before recording starts, then
called while recording: it was compiled without the recorder's hooks, so
its launches run unseen and the trace must say so."""

import sys

import torch
import torch._inductor.config
import tritontui

torch._inductor.config.cpp_wrapper = True
f = torch.compile(lambda x: (x * 2).sin())
x = torch.randn(1024)
f(x)
with tritontui.record(sys.argv[1]):
    f(x)

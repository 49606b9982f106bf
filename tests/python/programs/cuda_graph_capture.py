"""A hand-written CUDA graph: a compiled function (one Triton kernel) and a
cuBLAS matmul captured with ``torch.cuda.graph`` while recording, then
replayed three times on new inputs. Prints, per replay, the exact hash of
the graph's output read after the replay (the recorder's replay hashes
must equal them)."""

import sys

import torch
import tritontui

torch.manual_seed(0)
x = torch.randn(256, 256, device="cuda")
w = torch.randn(256, 256, device="cuda")
f = torch.compile(lambda x: (x * 2).sin())
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(2):
        y = f(x) @ w
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with tritontui.record(sys.argv[1]):
    with torch.cuda.graph(graph):
        y = f(x) @ w
    for step in range(3):
        x.copy_(torch.randn(256, 256, device="cuda") * (step + 1))
        graph.replay()
        print(f"replay {step} {tritontui.hash_tensor(y):016x}", flush=True)

"""Random ops captured into a CUDA graph by hand: a dropout and fp32
scaled-dot-product attention (memory-efficient, which takes the default
generator's state even without dropout), replayed three times. torch
refuses to read a CUDA generator's offset during a capture, which the
recorder asked for to describe their generator argument. Prints the hash
of each replay's outputs."""

import sys

import torch
import torch.nn.functional as F
import tritontui

torch.manual_seed(0)
q = torch.randn(2, 4, 128, 64, device="cuda")


def step() -> torch.Tensor:
    attended = F.scaled_dot_product_attention(q, q, q)
    return F.dropout(attended, p=0.5)


side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    for _ in range(2):
        step()
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with tritontui.record(sys.argv[1]):
    with torch.cuda.graph(graph):
        out = step()
    for n in range(3):
        graph.replay()
        print(f"replay {n} {tritontui.hash_tensor(out):016x}", flush=True)

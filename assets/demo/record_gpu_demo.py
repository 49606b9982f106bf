"""Records the bundled demo pair on a CUDA GPU: a small compiled training
step whose index_add (a Triton kernel with tl.atomic_add) gives different
bits from run to run. Run twice, keep the first pair that diverges:

    python assets/demo/record_gpu_demo.py run0.msgpack
    python assets/demo/record_gpu_demo.py run1.msgpack
    tritontui diff run0.msgpack run1.msgpack
"""

import sys

import torch
import tritontui

torch.manual_seed(0)
rows, n, d = 512, 1 << 16, 32
embedding = torch.nn.Parameter(torch.randn(rows, d, device="cuda") * 0.1)
proj = torch.nn.Linear(d, d).cuda()
tokens = torch.randint(0, rows, (n,), device="cuda")
updates = torch.randn(n, d, device="cuda")


def step() -> torch.Tensor:
    pooled = torch.zeros(rows, d, device="cuda").index_add(0, tokens, updates)
    h = torch.nn.functional.gelu(proj(pooled + embedding))
    loss = torch.softmax(h, dim=-1).pow(2).mean()
    loss.backward()
    return loss


compiled = torch.compile(step)
compiled()
# Gradients start empty: otherwise the recorded step would add to those of
# the warm-up call, written outside the recorded region.
embedding.grad = None
proj.zero_grad(set_to_none=True)
with tritontui.record(sys.argv[1]):
    loss = compiled()
torch.cuda.synchronize()
print(loss.item())

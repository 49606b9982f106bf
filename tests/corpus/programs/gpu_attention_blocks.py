"""A compiled multi-head attention layer (bf16 autocast, no dropout, not
causal) run forward and backward in two ``record()`` blocks of one
process (run A, run B), its gradients cleared before each, with an
unrecorded forward on another input between the blocks: the outputs and
gradients are equal bit for bit. Inductor calls cuDNN's attention with
its trailing default arguments left out (``dropout_p=0.0`` among them);
the attention returns its Philox seed and offset unwritten
(``at::empty``), so their bytes are whatever the memory held in each
block."""

import torch
from _harness import parse, run_blocks

args = parse(__doc__, blocks=True)
torch.manual_seed(0)
attention = torch.nn.MultiheadAttention(256, 4, batch_first=True).cuda()
compiled = torch.compile(attention)
x = torch.randn(8, 64, 256, device="cuda")


def forward(h: torch.Tensor) -> torch.Tensor:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return compiled(h, h, h, need_weights=False)[0]


def block() -> dict[str, torch.Tensor]:
    for p in attention.parameters():
        p.grad = None
    out = forward(x)
    out.float().square().mean().backward()
    torch.cuda.synchronize()
    grads = {f"{name}.grad": p.grad for name, p in attention.named_parameters()}
    return {"out": out, **grads}


def another_input() -> None:
    with torch.no_grad():
        forward(x.flip(0) * 3)
    torch.cuda.synchronize()


forward(x).float().sum().backward()
run_blocks(args, block, block, between=another_input)

"""A compiled FlexAttention forward and backward with a causal block mask
on a GPU (Inductor's Triton flex_attention templates, deterministic):
equal gradients bit for bit in both runs. Tensors without storage of
their own are alive when recording stops; the results record failed on
them ("Cannot access data pointer of Tensor that doesn't have storage")
and became a gap, so the pair was inconclusive."""

import torch
from _harness import parse, run
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

args = parse(__doc__)
torch.manual_seed(0)
batch, heads, tokens, dim = 2, 4, 256, 64
q, k, v = (
    torch.randn(batch, heads, tokens, dim, device="cuda", requires_grad=True) for _ in range(3)
)


def causal(b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor, kv_idx: torch.Tensor):
    return q_idx >= kv_idx


mask = create_block_mask(causal, None, None, tokens, tokens, device="cuda")
attention = torch.compile(flex_attention)


def main() -> dict[str, torch.Tensor]:
    out = attention(q, k, v, block_mask=mask)
    out.square().sum().backward()
    return {"out": out, "dq": q.grad, "dk": k.grad, "dv": v.grad}


run(args, main)

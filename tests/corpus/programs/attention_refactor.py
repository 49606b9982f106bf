"""Two versions of one model: two attention blocks (4 heads, d=64, causal)
around a LayerNorm, trained one AdamW step in float32 on the CPU,
eagerly. Run A computes attention by hand (softmax of the masked scaled
scores, times the values); run B (--variant) calls
``scaled_dot_product_attention``, which takes the default generator for
its dropout and, with ``dropout_p`` 0, draws nothing. Recorded with
samples; a float64 run of version A says how far each run is off."""

import torch
from _harness import parse, run, state

args = parse(__doc__, variant="call scaled_dot_product_attention")


class Attention(torch.nn.Module):
    def __init__(self, width: int = 64, heads: int = 4, sdpa: bool = False) -> None:
        super().__init__()
        self.heads, self.sdpa = heads, sdpa
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.out = torch.nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if self.sdpa:
            a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = (q @ k.transpose(-1, -2)) / (d // self.heads) ** 0.5
            causal = torch.ones(t, t, dtype=torch.bool).triu(1)
            a = scores.masked_fill(causal, float("-inf")).softmax(-1) @ v
        return self.out(a.transpose(1, 2).reshape(b, t, d))


def training(sdpa: bool, dtype: torch.dtype):
    """One AdamW step of the model, seeded, in `dtype`."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        Attention(sdpa=sdpa), torch.nn.LayerNorm(64), Attention(sdpa=sdpa)
    ).to(dtype)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(4, 32, 64, dtype=dtype)

    def main() -> dict[str, torch.Tensor]:
        loss = model(x).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return {"loss": loss.detach(), **state(model, optimizer)}

    return main


run(
    args,
    training(args.variant, torch.float64 if args.float64 else torch.float32),
    samples=True,
    reference=training(False, torch.float64),
)

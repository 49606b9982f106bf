"""A small GPT (token and position embeddings, causal attention through
scaled_dot_product_attention, layer norms, a GELU MLP) trained for three
steps with AdamW, compiled (or eagerly, or in float64, for the pairs of
two programs): what the GPT programs of the corpus share."""

import argparse
import contextlib
from collections.abc import Callable

import torch
from _harness import run, state, train

D, HEADS, T = 32, 2, 16


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(D)
        self.qkv = torch.nn.Linear(D, 3 * D)
        self.proj = torch.nn.Linear(D, D)
        self.ln2 = torch.nn.LayerNorm(D)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(D, 4 * D), torch.nn.GELU(), torch.nn.Linear(4 * D, D)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
        q, k, v = (z.view(b, t, HEADS, D // HEADS).transpose(1, 2) for z in (q, k, v))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, D))
        return x + self.mlp(self.ln2(x))


class GPT(torch.nn.Module):
    def __init__(self, vocab: int) -> None:
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, D)
        self.pos = torch.nn.Embedding(T, D)
        self.blocks = torch.nn.Sequential(Block(), Block())
        self.ln = torch.nn.LayerNorm(D)
        self.head = torch.nn.Linear(D, vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        return self.head(self.ln(self.blocks(x)))


def training(
    vocab: int,
    batch: int,
    device: str = "cpu",
    autocast: torch.dtype | None = None,
    compiled: bool = True,
    dtype: torch.dtype = torch.float32,
) -> Callable[[], dict[str, torch.Tensor]]:
    """Three AdamW steps of a GPT (compiled unless ``compiled`` is false)
    over ``batch`` sequences of tokens drawn from ``vocab``, on ``device``,
    in ``dtype``, its forward under ``torch.autocast`` to ``autocast`` when
    given (parameters and optimizer state in ``dtype`` either way);
    returns the results by name."""
    torch.manual_seed(0)
    model = GPT(vocab).to(device, dtype)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    step = torch.compile(model) if compiled else model
    data = torch.randint(0, vocab, (batch, T + 1), generator=torch.Generator().manual_seed(1))
    data = data.to(device)

    def precision() -> contextlib.AbstractContextManager:
        if autocast is None:
            return contextlib.nullcontext()
        return torch.autocast(device, dtype=autocast)

    def loss() -> torch.Tensor:
        with precision():
            logits = step(data[:, :-1])
        # An autocast forward's logits in float32, a float64 run's as they are.
        logits = logits.to(torch.promote_types(logits.dtype, torch.float32))
        return torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), data[:, 1:].reshape(-1))

    def main() -> dict[str, torch.Tensor]:
        return {"loss": train(optimizer, loss, 3), **state(model, optimizer)}

    return main


def eager_against_compiled(args: argparse.Namespace, device: str = "cpu") -> None:
    """The GPT's eager-against-compiled pairs' run on ``device``: eagerly in
    run A, compiled in run B (``--variant``), recorded with samples; the
    model in float64 is the truth (and, with ``--float64``, the reference
    run)."""
    run(
        args,
        training(
            vocab=96,
            batch=4,
            device=device,
            compiled=args.variant and not args.float64,
            dtype=torch.float64 if args.float64 else torch.float32,
        ),
        samples=True,
        reference=training(vocab=96, batch=4, device=device, compiled=False, dtype=torch.float64),
    )

"""A small GPT trained for 2,000 steps on a GPU (compiled, AdamW, math
attention, one sequence of 16 distinct tokens a step: every kernel
deterministic), whose data path adds rows of a feature table into its
input with an index_add. Until step 1,500 every row lands in a slot of
its own; from step 1,500 on, 64 rows share each slot, and the compiled
index_add sums them with atomic adds in whatever order they land.

Run as a script (no arguments) it trains unrecorded, as ``tritontui
check --steps`` runs it; the corpus pairs record it with the harness."""

from __future__ import annotations

import torch
from _gpt import GPT, T
from _harness import state

STEPS = 2000
COLLIDING_FROM = 1500
ROWS, SLOTS = 4096, 64


def train_long(steps: int = STEPS) -> dict[str, torch.Tensor]:
    """Trains for ``steps`` steps; the results."""
    torch.manual_seed(0)
    vocab = 2048
    model = GPT(vocab).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    features = torch.randn(ROWS, model.tok.embedding_dim, device="cuda")

    def loss_of(tokens: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        mixed = torch.zeros_like(features).index_add(0, slots, features)
        x = model.tok(tokens[:, :-1]) + model.pos(torch.arange(T, device="cuda")) + mixed[:T]
        logits = model.head(model.ln(model.blocks(x)))
        return torch.nn.functional.cross_entropy(
            logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1)
        )

    compiled = torch.compile(loss_of)
    draw = torch.Generator().manual_seed(1)
    apart = torch.arange(ROWS, device="cuda")
    shared = apart % SLOTS
    losses = []
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        for step in range(steps):
            tokens = torch.randperm(vocab, generator=draw)[: T + 1].view(1, T + 1).cuda()
            loss = compiled(tokens, shared if step >= COLLIDING_FROM else apart)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if step % 250 == 0:
                losses.append(loss.item())
    return {"losses": torch.tensor(losses), **state(model, optimizer)}


if __name__ == "__main__":
    train_long()

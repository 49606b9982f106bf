"""A stack of residual blocks (LayerNorm, Linear, GELU) trained with
AdamW: the model the two-program pairs compare, built the same way in
any dtype so that a float64 run of it gives their numerics' truth."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import torch
from _harness import run, state


class Block(torch.nn.Module):
    def __init__(self, width: int, rounds: bool = False, eps: float = 1e-5) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(width, eps=eps)
        self.fc = torch.nn.Linear(width, width)
        self.rounds = rounds

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(self.fc(self.norm(x)))
        if self.rounds:
            # A planted precision bug Inductor keeps: a coarse rounding.
            h = torch.round(h * 64) / 64
        return x + h


def training(
    blocks: int,
    width: int,
    steps: int,
    dtype: torch.dtype = torch.float32,
    device: str = "cpu",
    compiled: bool = False,
    rounds: int | None = None,
    autocast: torch.dtype | None = None,
    eps: tuple[int, float] | None = None,
) -> Callable[[], dict[str, torch.Tensor]]:
    """``steps`` AdamW steps of ``blocks`` blocks (the block numbered
    ``rounds`` rounding; with ``eps`` ``(i, value)``, block ``i``'s
    LayerNorm taking that epsilon), seeded, in ``dtype`` (under
    ``autocast`` to that dtype when given): returns the function that
    trains and gives the results (loss, parameters, gradients, state)."""
    torch.manual_seed(0)
    epsilon = dict([eps]) if eps else {}
    model = torch.nn.Sequential(
        *[Block(width, rounds=i == rounds, eps=epsilon.get(i, 1e-5)) for i in range(blocks)]
    )
    x = torch.randn(16, width)
    model, x = model.to(device, dtype), x.to(device, dtype)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    forward = torch.compile(model) if compiled else model

    def train() -> dict[str, torch.Tensor]:
        losses = []
        for _ in range(steps):
            with torch.autocast(device, dtype=autocast or torch.bfloat16, enabled=bool(autocast)):
                loss = forward(x).square().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
        return {"loss": torch.stack(losses), **state(model, optimizer)}

    return train


def against_float64(
    args: argparse.Namespace,
    blocks: int,
    steps: int,
    device: str = "cpu",
    confirm: Callable[[], dict[str, float]] | None = None,
    **planted: object,
) -> None:
    """A two-program pair's run: ``blocks`` blocks compiled, ``steps``
    AdamW steps, run B (``--variant``) trained with the ``planted``
    options of :func:`training` (a bug), recorded with samples; the model
    without them in float64 is the truth (and, with ``--float64``, the
    reference run)."""
    run(
        args,
        training(
            blocks=blocks,
            width=64,
            steps=steps,
            device=device,
            compiled=not args.float64,
            dtype=torch.float64 if args.float64 else torch.float32,
            **(planted if args.variant else {}),
        ),
        threads=1 if device == "cpu" else 2,
        samples=True,
        reference=training(
            blocks=blocks, width=64, steps=steps, dtype=torch.float64, device=device
        ),
        confirm=confirm,
    )


def planted_rounding(args: argparse.Namespace, device: str = "cpu") -> None:
    """The planted_rounding pairs' run on ``device``: three blocks compiled,
    one AdamW step, the middle block rounding to 1/64 in run B."""
    against_float64(args, blocks=3, steps=1, device=device, rounds=1)

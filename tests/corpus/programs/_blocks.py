"""A compiled three-layer MLP on one unbatched input, as the in-process
pairs (``blocks_*``) share it: the model, its compiled call, and the
input, seeded alike in every run."""

import torch


def mlp() -> torch.nn.Sequential:
    """Linear 32 -> 64 -> 64 -> 10 with ReLUs, seeded."""
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(32, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 10),
    )


def named(model: torch.nn.Module, **outputs: torch.Tensor) -> dict[str, torch.Tensor]:
    """The block's results: ``outputs`` and the model's parameters."""
    return {**outputs, **dict(model.named_parameters())}

"""A compiled three-layer MLP on one unbatched input, as the in-process
pairs (``blocks_*``) share it: the model, its compiled call, and the
input, seeded alike in every run, the call made once unrecorded."""

import torch


def compiled_mlp() -> tuple[torch.nn.Sequential, torch.nn.Module, torch.Tensor, torch.Tensor]:
    """Linear 32 -> 64 -> 64 -> 10 with ReLUs (seeded), compiled and
    called once without grad on its input: the model, the compiled model,
    the input and that call's output (which the program keeps)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(32, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 10),
    )
    compiled = torch.compile(model)
    x = torch.randn(32, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        warm = compiled(x)
    return model, compiled, x, warm


def named(model: torch.nn.Module, **outputs: torch.Tensor) -> dict[str, torch.Tensor]:
    """The block's results: ``outputs`` and the model's parameters."""
    return {**outputs, **dict(model.named_parameters())}

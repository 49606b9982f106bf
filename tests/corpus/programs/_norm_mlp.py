"""The float32 MLP with LayerNorms that the inference pairs share."""

import torch


def norm_mlp(second_norm: bool = False) -> torch.nn.Sequential:
    """Linear 128->256, GELU, Linear 256->128, LayerNorm, then Linear
    128->10; with ``second_norm``, SiLU, Linear 128->64, LayerNorm and
    Linear 64->10 instead of that last one. Seeded (0)."""
    torch.manual_seed(0)
    layers = [
        torch.nn.Linear(128, 256),
        torch.nn.GELU(),
        torch.nn.Linear(256, 128),
        torch.nn.LayerNorm(128),
    ]
    if second_norm:
        layers += [torch.nn.SiLU(), torch.nn.Linear(128, 64), torch.nn.LayerNorm(64)]
        layers.append(torch.nn.Linear(64, 10))
    else:
        layers.append(torch.nn.Linear(128, 10))
    return torch.nn.Sequential(*layers)

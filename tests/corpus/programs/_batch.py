"""What the batch programs share: confirming, outside the recorder, which
layer makes a request's result depend on what it was batched with."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch


def layers_apart(
    layers: Iterable[tuple[str, Callable[[torch.Tensor], torch.Tensor]]],
    alone: torch.Tensor,
    batch: torch.Tensor,
    request: int = 0,
) -> dict[str, float]:
    """Runs each layer, in order, on the request alone and on the batch
    whose request holds the lone request's input to it (so that what the
    layer reads agrees), and gives, per layer, the largest difference
    between the request's two outputs: 0 for a layer batch-invariant on
    this input, more for one that is not."""
    apart = {}
    with torch.no_grad():
        x_alone, x_batch = alone, batch.clone()
        for name, layer in layers:
            x_batch[request] = x_alone[0]
            y_alone, y_batch = layer(x_alone), layer(x_batch)
            apart[name] = (y_alone[0] - y_batch[request]).abs().max().item()
            x_alone, x_batch = y_alone, y_batch
    return apart


def named_layers(model: torch.nn.Sequential) -> list[tuple[str, torch.nn.Module]]:
    """A Sequential's layers named `0 LayerNorm`, `1 Linear`, ..."""
    return [(f"{name} {type(layer).__name__}", layer) for name, layer in model.named_children()]

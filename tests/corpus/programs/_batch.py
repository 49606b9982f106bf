"""What the batch programs share: confirming, outside the recorder, which
layer makes a request's result depend on what it was batched with."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable

import torch
from _harness import run


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


def mlp(linear: type[torch.nn.Linear] = torch.nn.Linear) -> torch.nn.Sequential:
    """The batch programs' float32 MLP (LayerNorm, Linear 512→2048, GELU,
    Linear 2048→512, each Linear a ``linear``), seeded, in eval mode."""
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.LayerNorm(512),
        linear(512, 2048),
        torch.nn.GELU(),
        linear(2048, 512),
    ).eval()


def run_request(
    args: argparse.Namespace,
    compiled: Callable[[torch.Tensor], torch.Tensor],
    batch: torch.Tensor,
    position: int,
    confirm: Callable[[], dict[str, float]],
) -> None:
    """Records ``compiled`` without gradients, with row hashes: run B
    (``--variant``) on the whole batch, run A on the request at
    ``position`` alone; the result is the request's output."""
    x = batch if args.variant else batch[position : position + 1].clone()

    def main() -> dict[str, torch.Tensor]:
        with torch.no_grad():
            out = compiled(x)
        if out.is_cuda:
            torch.cuda.synchronize()
        return {"request": out[position if args.variant else 0].clone()}

    run(args, main, rows=True, confirm=confirm)


def model_apart(
    model: torch.nn.Sequential, batch: torch.Tensor, position: int = 0
) -> Callable[[], dict[str, float]]:
    """What confirms a Sequential's batch-variant layer: each layer eagerly
    on the lone request and on the batch (:func:`layers_apart`)."""
    return lambda: layers_apart(
        named_layers(model), batch[position : position + 1].clone(), batch, request=position
    )


def compiled_apart(
    fn: Callable[[torch.Tensor], torch.Tensor],
    compiled: Callable[..., torch.Tensor],
    batch: torch.Tensor,
) -> Callable[[], dict[str, float]]:
    """What confirms a compiled function of one kernel (or a few) batch
    variant: ``compiled`` on the lone request beside ``fn`` compiled for
    the batch's shape (static, as run B compiles it), on the batch."""

    def confirm() -> dict[str, float]:
        batched = torch.compile(fn, dynamic=False)
        with torch.no_grad():
            apart = compiled(batch[:1].clone())[0] - batched(batch)[0]
        return {f"compiled {fn.__name__}": apart.abs().max().item()}

    return confirm

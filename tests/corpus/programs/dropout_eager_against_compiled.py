"""Eager against compiled with dropout: a Linear 64→256, GELU, Dropout(0.1),
Linear 256→64, trained one AdamW step in float32 on the CPU, eagerly in
run A and compiled in run B (--variant), from the same generator state.
Eager dropout draws its mask with `aten::bernoulli_`; compiled code draws
seeds (`aten::randint.low_out`) and makes its mask in its kernel, so the
two programs drop other elements and their results differ by far more
than rounding. What confirms it: the same step compiled with
`torch._inductor.config.fallback_random = True` (compiled code drawing as
eager does) against eager, and without it."""

import torch
from _harness import parse, run, state

args = parse(__doc__, variant="compile the model")


def training(compiled: bool) -> tuple[torch.nn.Module, torch.optim.Optimizer, torch.Tensor]:
    """One step's model, optimizer and loss function's input, seeded."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 256),
        torch.nn.GELU(),
        torch.nn.Dropout(0.1),
        torch.nn.Linear(256, 64),
    )
    return model, torch.optim.AdamW(model.parameters(), lr=1e-3), torch.randn(32, 64)


def step(compiled: bool) -> dict[str, torch.Tensor]:
    """One AdamW step, eager or compiled, drawing from seed 1."""
    model, optimizer, x = training(compiled)
    forward = torch.compile(model) if compiled else model
    torch.manual_seed(1)
    loss = forward(x).square().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return {"loss": loss.detach(), **state(model, optimizer)}


def apart() -> dict[str, float]:
    """How far compiled results are from eager's, with compiled code
    drawing as eager does and without: the largest difference of any
    parameter after the step."""

    def furthest(x: dict[str, torch.Tensor], y: dict[str, torch.Tensor]) -> float:
        return max((x[name] - y[name]).abs().max().item() for name in x)

    eager = step(compiled=False)
    torch._dynamo.reset()
    with torch._inductor.config.patch({"fallback_random": True}):
        drawn_as_eager = step(compiled=True)
    torch._dynamo.reset()
    return {
        "compiled, fallback_random, against eager": furthest(drawn_as_eager, eager),
        "compiled against eager": furthest(step(compiled=True), eager),
    }


run(args, lambda: step(compiled=args.variant), samples=True, confirm=apart)

"""Per-sample gradients with torch.func (``vmap`` over ``grad`` through
``functional_call``), compiled with ``max-autotune-no-cudagraphs``, on the
CPU: equal bit for bit in both runs. Batched and grad-tracking tensors,
which have no storage of their own, are alive when recording stops; the
results record failed on them ("Cannot access data pointer of Tensor
that doesn't have storage") and became a gap."""

import torch
from _harness import parse, run
from torch.func import functional_call, grad, vmap

args = parse(__doc__)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
params = {k: v.detach() for k, v in model.named_parameters()}
g = torch.Generator().manual_seed(1)
x, y = torch.randn(8, 16, generator=g), torch.randn(8, 4, generator=g)


def loss(p: dict[str, torch.Tensor], xi: torch.Tensor, yi: torch.Tensor) -> torch.Tensor:
    out = functional_call(model, p, (xi.unsqueeze(0),))
    return torch.nn.functional.mse_loss(out, yi.unsqueeze(0))


per_sample = torch.compile(
    vmap(grad(loss), in_dims=(None, 0, 0)), mode="max-autotune-no-cudagraphs"
)


def main() -> dict[str, torch.Tensor]:
    return per_sample(params, x, y)


run(args, main)

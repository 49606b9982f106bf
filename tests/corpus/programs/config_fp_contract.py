"""Two steps of AdamW on a compiled float32 MLP (LayerNorm, Linear
256→1024, GELU, Linear 1024→256, LayerNorm) on the CPU; with --variant
Inductor's C++ kernels are compiled with floating-point contraction
(torch._inductor.config.cpp.enable_floating_point_contract_flag =
"fast"): the same sources, built with other compiler flags, so their
multiplies and adds fuse and round otherwise. The first kernel, the
first LayerNorm's, writes its statistics into an in/out buffer just
allocated, whose old bytes are whatever the memory held. What confirms
it is that first LayerNorm compiled alone with each flag."""

import torch
from _harness import parse, run, state, train

args = parse(__doc__, variant='compile with cpp.enable_floating_point_contract_flag = "fast"')
if args.variant:
    torch._inductor.config.cpp.enable_floating_point_contract_flag = "fast"
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.LayerNorm(256),
    torch.nn.Linear(256, 1024),
    torch.nn.GELU(),
    torch.nn.Linear(1024, 256),
    torch.nn.LayerNorm(256),
)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
compiled = torch.compile(model)
x, y = torch.randn(64, 256), torch.randn(64, 256)


def main() -> dict[str, torch.Tensor]:
    losses = train(optimizer, lambda: ((compiled(x) - y) ** 2).mean(), steps=2)
    return {"losses": losses, **state(model, optimizer)}


def layer_norm_apart() -> dict[str, float]:
    """The first LayerNorm compiled alone without contraction and with it,
    on the same input: the largest difference of their outputs."""
    outputs = []
    for flag in ("off", "fast"):
        torch._dynamo.reset()
        with torch._inductor.config.patch({"cpp.enable_floating_point_contract_flag": flag}):
            with torch.no_grad():
                outputs.append(torch.compile(model[0])(x))
    return {"0.LayerNorm, off against fast": (outputs[0] - outputs[1]).abs().max().item()}


run(args, main, confirm=layer_norm_apart)

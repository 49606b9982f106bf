"""Two configs: four residual blocks (LayerNorm, Linear, GELU) trained two
AdamW steps in float32 on the CPU, compiled in both runs; run B
(--variant) compiles Inductor's C++ kernels with floating-point
contraction (torch._inductor.config.cpp.enable_floating_point_contract_flag
= "fast"): the same sources, built with other compiler flags, so their
multiplies and adds fuse and round otherwise. The first kernel, the
first LayerNorm's, writes its statistics into an in/out buffer just
allocated, whose old bytes are whatever the memory held. A float64 run
of the model says by how much each run is off; what confirms the first
kernel is a LayerNorm compiled alone with each flag."""

import torch
from _harness import parse
from _residual_mlp import against_float64

args = parse(__doc__, variant='compile with cpp.enable_floating_point_contract_flag = "fast"')
if args.variant:
    torch._inductor.config.cpp.enable_floating_point_contract_flag = "fast"


def layer_norm_apart() -> dict[str, float]:
    """A LayerNorm of the blocks' width compiled alone without contraction
    and with it, on the same input: the largest difference of their
    outputs."""
    torch.manual_seed(0)
    norm, x = torch.nn.LayerNorm(64), torch.randn(16, 64)
    outputs = []
    for flag in ("off", "fast"):
        torch._dynamo.reset()
        config = {"cpp.enable_floating_point_contract_flag": flag}
        with torch._inductor.config.patch(config), torch.no_grad():
            outputs.append(torch.compile(norm)(x))
    return {"LayerNorm(64), off against fast": (outputs[0] - outputs[1]).abs().max().item()}


against_float64(args, blocks=4, steps=2, confirm=layer_norm_apart)

"""Inductor's coordinate-descent tuning switched on after import, on a GPU:
a compiled LayerNorm, Linear, GELU and a column sum over 4096 rows in
float32; with --variant the program sets
torch._inductor.config.coordinate_descent_tuning = True after recording
began, as people do after ``import torch``. The tuning picks other block
sizes for the reductions, which sum in another order: only each graph's
compile can say why."""

import torch
from _harness import parse, run

args = parse(
    __doc__,
    variant="set torch._inductor.config.coordinate_descent_tuning = True after recording began",
)
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.LayerNorm(1024), torch.nn.Linear(1024, 1024), torch.nn.GELU()
).cuda()
x = torch.randn(4096, 1024, device="cuda")


def main() -> dict[str, torch.Tensor]:
    if args.variant:
        torch._inductor.config.coordinate_descent_tuning = True
    forward = torch.compile(lambda t: model(t).sum(dim=0))
    return {"y": forward(x).detach()}


run(args, main)

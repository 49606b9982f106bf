"""A compiled fp32 MLP on the GPU, whose matmuls are cuBLAS calls
(Inductor's extern kernels): run B turns TF32 on for them after recording
began (``torch.backends.cuda.matmul.allow_tf32 = True``), so both headers
say TF32 is off and only the settings in force at the matmul tell the
runs apart. Before settings were sampled where they act, the first
matmul was called a nondeterministic kernel."""

import torch
from _harness import parse, run

args = parse(__doc__, variant="turn TF32 on after recording began")
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)
).cuda()
x = torch.randn(64, 256, device="cuda")
f = torch.compile(model)


def main() -> dict[str, torch.Tensor]:
    if args.variant:
        torch.backends.cuda.matmul.allow_tf32 = True
    with torch.no_grad():
        out = f(x)
    torch.cuda.synchronize()
    return {"out": out}


run(args, main)

"""A compiled model with pointwise, reduction, matmul and softmax kernels,
run forward and backward. Records to --out when given; --result saves the
output and gradients' bytes so runs can be compared bit for bit."""

import argparse

import torch
import tritontui

parser = argparse.ArgumentParser()
parser.add_argument("--out")
parser.add_argument("--result")
parser.add_argument("--bump", action="store_true", help="change one weight by 1e-3")
args = parser.parse_args()

torch.set_num_threads(1)
torch.manual_seed(0)


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(32, 64)
        self.down = torch.nn.Linear(64, 16)
        self.norm = torch.nn.LayerNorm(64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(self.up(x)) * 0.5 + 1.0
        h = self.norm(h)
        return torch.softmax(self.down(h), dim=-1)


model = Block()
if args.bump:
    with torch.no_grad():
        model.down.weight[3, 7] += 1e-3
x = torch.randn(128, 32)
step = torch.compile(model)


def run() -> list[torch.Tensor]:
    out = step(x)
    loss = (out * torch.arange(16.0)).sum()
    loss.backward()
    return [out.detach(), *(p.grad for p in model.parameters())]


if args.out:
    with tritontui.record(args.out):
        results = run()
else:
    results = run()
if args.result:
    with open(args.result, "wb") as f:
        for t in results:
            f.write(t.contiguous().view(torch.uint8).numpy().tobytes())
print("done")

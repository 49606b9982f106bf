"""The corpus's small GPT (two blocks, causal attention, a GELU MLP),
compiled and evaluated without gradients on the CPU, on one request of 16
tokens alone; with --variant on the same request as row 5 of a batch of 8
(compared with ``--request A:0 B:5``). Recorded with row hashes
(``rows``). The result is the request's logits."""

import torch
from _gpt import GPT
from _harness import parse, run

args = parse(__doc__, variant="the request as row 5 of a batch of 8")
torch.manual_seed(0)
model = GPT(64).eval()
compiled = torch.compile(model)
batch = torch.randint(0, 64, (8, 16), generator=torch.Generator().manual_seed(3))
x = batch if args.variant else batch[5:6].clone()


def main() -> dict[str, torch.Tensor]:
    with torch.no_grad():
        logits = compiled(x)
    return {"request": logits[5 if args.variant else 0].clone()}


run(args, main, rows=True)

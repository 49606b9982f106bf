"""Attention with dropout on the GPU, trained one step: weights from seed
0, dropout drawn from the default CUDA generator seeded 1 in run A and 2
in run B. Eager ``scaled_dot_product_attention`` (the memory-efficient
kernel, fp32) draws its mask from the generator and hands its Philox
seed and offset to its backward; a compiled dropout after it draws its
seeds with Inductor's ``aten::randint.low_out``. The generator's state is
an input of both: before it was recorded, the attention's Philox outputs
and the seed draws were called nondeterministic."""

import torch
import torch.nn.functional as F
from _harness import parse, run, state, train

args = parse(__doc__, variant="seed the dropout with 2 instead of 1")
torch.manual_seed(0)
model = torch.nn.ModuleDict(
    {"qkv": torch.nn.Linear(64, 192), "out": torch.nn.Linear(64, 64)}
).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 32, 64, device="cuda")
head = torch.compile(lambda h: F.dropout(model["out"](h), 0.2, training=True).relu())


def loss() -> torch.Tensor:
    q, k, v = model["qkv"](x).view(4, 32, 3, 4, 16).permute(2, 0, 3, 1, 4)
    h = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3)
    return head(h.transpose(1, 2).reshape(4, 32, 64)).square().mean()


def main() -> dict[str, torch.Tensor]:
    torch.manual_seed(2 if args.variant else 1)
    losses = train(optimizer, loss, steps=1)
    torch.cuda.synchronize()
    return {"losses": losses, **state(model, optimizer)}


run(args, main)

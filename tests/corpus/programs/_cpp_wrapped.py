"""A small CUDA model for the C++-wrapper pairs: a linear layer (an extern
matmul), a fused ReLU (a Triton kernel) and an index_add with colliding
indices (a Triton kernel with atomic adds, whose sums differ run to run)."""

import torch


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(256, 256)

    def forward(self, x: torch.Tensor, index: torch.Tensor, src: torch.Tensor):
        added = torch.zeros(64, 256, device=x.device).index_add(0, index, src)
        return self.linear(x).relu() * 2 + 1, added


def model_and_inputs() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    """The model and its inputs, the same in every run."""
    torch.manual_seed(0)
    model = Model().cuda()
    inputs = (
        torch.randn(512, 256, device="cuda"),
        torch.randint(0, 64, (1 << 16,), device="cuda"),
        torch.randn(1 << 16, 256, device="cuda"),
    )
    return model, inputs

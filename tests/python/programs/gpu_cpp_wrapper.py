"""A small CUDA model (a linear layer: an extern matmul; Triton kernels;
with ``--index-add``, an index_add with colliding indices: a Triton
kernel with atomic adds) run as ``MODE``: ``python`` (torch.compile),
``cpp`` (torch.compile with cpp_wrapper) or ``aoti`` (an AOTInductor
package built with ``tritontui.compile_package`` at PACKAGE, loaded in
this process). Records to TRACE and saves the outputs to TRACE.pt.

    python gpu_cpp_wrapper.py TRACE MODE [PACKAGE] [--index-add]
"""

import sys

import torch
import torch._inductor.config
import tritontui

trace, mode = sys.argv[1], sys.argv[2]
package = sys.argv[3] if mode == "aoti" else None
index_add = "--index-add" in sys.argv


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(256, 256)

    def forward(self, x: torch.Tensor, index: torch.Tensor, src: torch.Tensor):
        y = self.linear(x).relu() * 2 + 1
        if not index_add:
            return y, y.sum(dim=0)
        return y, torch.zeros(64, 256, device=x.device).index_add(0, index, src)


torch.manual_seed(0)
model = Model().cuda()
inputs = (
    torch.randn(512, 256, device="cuda"),
    torch.randint(0, 64, (1 << 16,), device="cuda"),
    torch.randn(1 << 16, 256, device="cuda"),
)
if mode == "aoti":
    with torch.no_grad():
        tritontui.compile_package(torch.export.export(model, inputs), package)
        run = torch._inductor.aoti_load_package(package)
else:
    torch._inductor.config.cpp_wrapper = mode == "cpp"
    run = torch.compile(model)
with torch.no_grad(), tritontui.record(trace):
    outputs = run(*inputs)
    outputs = run(*inputs)
torch.save([o.cpu() for o in outputs], trace + ".pt")

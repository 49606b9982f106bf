"""An AOTInductor package on the CPU: ``compile PACKAGE [--stock]`` builds
it with the recorder's hooks (``tritontui.compile_package``) or without
them; ``run PACKAGE OUT [TRACE]`` loads it in this fresh process, runs
it (recording to TRACE when given) and writes the output to OUT; it
imports tritontui first only when it records (the package is then
loaded with the recorder's hook in sight).
The model is a linear layer (an extern kernel) and an index_add on two
threads (a C++ kernel with atomic adds)."""

import sys

import torch

command, package = sys.argv[1], sys.argv[2]
torch.set_num_threads(2)


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(32, 32)

    def forward(self, x: torch.Tensor, index: torch.Tensor, src: torch.Tensor):
        added = torch.zeros(64, 32).index_add(0, index, src)
        return self.linear(x).relu() + 1, added


torch.manual_seed(0)
model = Model()
inputs = (torch.randn(64, 32), torch.randint(0, 64, (1 << 16,)), torch.randn(1 << 16, 32))
if command == "compile":
    exported = torch.export.export(model, inputs)
    if sys.argv[3:] == ["--stock"]:
        torch._inductor.aoti_compile_and_package(exported, package_path=package)
    else:
        import tritontui

        tritontui.compile_package(exported, package)
else:
    out, trace = sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None
    if trace:
        import tritontui
    loaded = torch._inductor.aoti_load_package(package)
    if trace:
        with tritontui.record(trace):
            results = loaded(*inputs)
    else:
        results = loaded(*inputs)
    torch.save([r.clone() for r in results], out)

"""The C++-wrapper model (``_cpp_wrapped``) as an AOTInductor package built
with ``tritontui.compile_package`` before recording, then loaded and run
while recording, on a CUDA device: the package calls the recorder around
the extern matmul and each Triton kernel. The index_add's atomic sums
differ run to run."""

import tempfile
from pathlib import Path

import torch
import tritontui
from _cpp_wrapped import model_and_inputs
from _harness import parse, run

args = parse(__doc__)
model, inputs = model_and_inputs()
with tempfile.TemporaryDirectory() as folder, torch.no_grad():
    package = tritontui.compile_package(
        torch.export.export(model, inputs), str(Path(folder) / "model.pt2")
    )
    loaded = torch._inductor.aoti_load_package(package)


def main() -> dict[str, torch.Tensor]:
    out, added = loaded(*inputs)
    return {"out": out, "added": added}


run(args, main)

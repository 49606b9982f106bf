"""The C++-wrapper model (``_cpp_wrapped``) compiled with
``torch._inductor.config.cpp_wrapper = True`` while recording, on a CUDA
device: its C++ wrapper calls the recorder around the extern matmul and
each Triton kernel. The index_add's atomic sums differ run to run."""

import torch
import torch._inductor.config
from _cpp_wrapped import model_and_inputs
from _harness import parse, run

torch._inductor.config.cpp_wrapper = True
args = parse(__doc__)
model, inputs = model_and_inputs()
compiled = torch.compile(model)


def main() -> dict[str, torch.Tensor]:
    with torch.no_grad():
        out, added = compiled(*inputs)
    return {"out": out, "added": added}


run(args, main)

"""One compiled graph with every kind of call site a C++ wrapper makes on
the CPU (C++ kernels, a C-shim extern kernel, a fallback returning its
outputs, the scatter and index_put fallbacks with views), recorded with
``cpp_wrapper`` on (argument ``cpp``) or off (``python``). Deterministic
algorithms keep every result the same in both."""

import sys

import torch
import torch._inductor.config
import tritontui

out, wrapper = sys.argv[1], sys.argv[2]
torch._inductor.config.cpp_wrapper = wrapper == "cpp"
torch.use_deterministic_algorithms(True)
torch.set_num_threads(2)


def f(x, w, index, src):
    y = (x @ w).relu()
    values, _ = torch.sort(y, dim=0)
    rows = (index[:16] % 16).view(16, 1).expand(16, 32)
    scattered = torch.zeros(16, 32).scatter_add(0, rows, src[:16])
    put = torch.zeros(64).index_put((index,), src[:, 0], accumulate=True)
    return y + 1, values, scattered, put * 2


compiled = torch.compile(f)
torch.manual_seed(0)
x, w = torch.randn(64, 32), torch.randn(32, 32)
index, src = torch.randint(0, 64, (128,)), torch.randn(128, 32)
with tritontui.record(out):
    results = compiled(x, w, index, src)
expected = f(x, w, index, src)
assert all(torch.allclose(a, b) for a, b in zip(results, expected, strict=True))

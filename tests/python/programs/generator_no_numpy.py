"""A compiled function on an input drawn from a ``torch.Generator``,
recorded in a Python where ``import numpy`` fails (torch does not need
numpy, so a program may lack it)."""

import sys

sys.modules["numpy"] = None  # `import numpy` now raises ImportError

import torch  # noqa: E402
import tritontui  # noqa: E402

out = sys.argv[1]
f = torch.compile(lambda x: (x * 2).relu().sum(0))
with tritontui.record(out):
    generator = torch.Generator().manual_seed(7)
    x = torch.randn(32, 64, generator=generator)
    y = f(x)
print(float(y.sum()))

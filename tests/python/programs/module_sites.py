"""Two residual blocks compiled, one forward and backward, recorded to
argv[1]; with a second argument block 1 rounds its activation to 1/64
(the ops ``aten.mul``, ``aten.round``, ``aten.div`` in module ``1``). On
the device ``MODULE_SITES_DEVICE`` names (the CPU by default)."""

import os
import sys
from pathlib import Path

import torch
import tritontui

# The corpus's residual block (LayerNorm, Linear, GELU; rounding on demand).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "corpus" / "programs"))
from _residual_mlp import Block

torch.manual_seed(0)
device = os.environ.get("MODULE_SITES_DEVICE", "cpu")
model = torch.nn.Sequential(Block(32), Block(32, rounds=len(sys.argv) > 2)).to(device)
model = torch.compile(model)
x = torch.randn(8, 32, device=device)
with tritontui.record(sys.argv[1]):
    model(x).square().mean().backward()

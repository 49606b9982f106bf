"""A compiled MLP trained for a few steps, by AdamW or (``MODE=manual``)
by hand with ``tritontui.step()`` ending each step; the batch of step
``NOISY`` (none by default) adds noise from a generator seeded by the
clock. Records to ``LONG_STEPS_TRACE`` when set (else ``TRITONTUI_RECORD`` records it,
as ``tritontui check`` runs it), with the options of the environment.
With ``EXPECT``, writes there (after recording stopped) the hashes of
the parameters and AdamW state as each step ended, in the order the
recorder fingerprints them (each parameter, then its state by key), taken
from clones made in the loop.

Environment: STEPS (6), NOISY (-1), DEVICE (cpu), MODE (optimizer,
manual, or both: AdamW and tritontui.step())."""

import contextlib
import json
import os
import time

import torch
import tritontui

torch.set_num_threads(1)
torch.manual_seed(0)
STEPS = int(os.environ.get("STEPS", "6"))
NOISY = int(os.environ.get("NOISY", "-1"))
DEVICE = os.environ.get("DEVICE", "cpu")
MODE = os.environ.get("MODE", "optimizer")

model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)).to(
    DEVICE
)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2) if MODE != "manual" else None
loss_of = torch.compile(lambda x, y: torch.nn.functional.mse_loss(model(x), y))
data, target = torch.randn(8, 16, device=DEVICE), torch.randn(8, 1, device=DEVICE)
clock = torch.Generator(device=DEVICE).manual_seed(time.time_ns())
kept: list[list[torch.Tensor]] = []

out = os.environ.get("LONG_STEPS_TRACE")
with tritontui.record(out) if out else contextlib.nullcontext():
    for step in range(STEPS):
        x = data
        if step == NOISY:
            x = data + 1e-3 * torch.randn(data.shape, generator=clock, device=DEVICE)
        loss = loss_of(x, target)
        loss.backward()
        if optimizer is not None:
            optimizer.step()
            optimizer.zero_grad()
        else:
            with torch.no_grad():
                for p in model.parameters():
                    p.sub_(1e-2 * p.grad)
                    p.grad = None
        if MODE != "optimizer":
            tritontui.step()
        state = []
        for p in model.parameters():
            state.append(p.detach().clone())
            if optimizer is not None:
                held = optimizer.state[p]
                state.extend(held[key].detach().clone() for key in sorted(held))
        kept.append(state)
    print("loss", loss.item())

if os.environ.get("EXPECT"):
    hashes = [[tritontui.hash_tensor(t) for t in s] for s in kept]
    with open(os.environ["EXPECT"], "w") as f:
        json.dump(hashes, f)

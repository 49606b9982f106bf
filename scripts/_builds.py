"""Builds of the recorder compared side by side: each build in processes
of its own, the builds alternating (the host's speed drifts between
processes as much as within one, so builds are compared pair by pair).
A SITE is a directory holding an installed ``tritontui``
(``pip install --target SITE --no-deps WHEEL``), put first on
``PYTHONPATH`` for its processes; the process comparing them imports
none of them."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path


def arguments(times: int) -> argparse.ArgumentParser:
    """The command line of a script comparing builds: its SITEs, how many
    times the builds alternate, and the hidden ``--one`` its processes
    are run with."""
    parser = argparse.ArgumentParser()
    parser.add_argument("sites", nargs="*")
    parser.add_argument("--times", type=int, default=times)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    return parser


def alternate(
    script: str, sites: list[str], times: int, args: list[str]
) -> Iterator[tuple[str, str]]:
    """Runs ``script --one ARGS`` once for each of ``sites`` in turn,
    ``times`` times over; yields each site with what its process printed
    (printed as it ended)."""
    here = Path(script).resolve().parent
    for _ in range(times):
        for site in sites:
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([site, str(here)])}
            command = [sys.executable, script, "--one", *args]
            out = subprocess.run(
                command, env=env, check=True, stdout=subprocess.PIPE, text=True
            ).stdout
            print(out, end="", flush=True)
            yield site, out


def training_step() -> tuple[str, Callable[[], None], Callable[[], None]]:
    """The step builds are compared on: its name, the step (compiled and
    warmed up), and what drains the device after it. The GPU benchmark's
    bf16 transformer step where CUDA is there, else the CPU GPT training
    step on two threads (as ``bench_recorder.gpt_step`` runs it)."""
    import torch

    if torch.cuda.is_available():
        import bench_gpu

        step = bench_gpu.compiled_step(torch.bfloat16)
        return "bf16 transformer step", step, torch.cuda.synchronize
    import bench_recorder

    torch.set_num_threads(2)
    return "CPU GPT step", bench_recorder.gpt_training_step(), lambda: None

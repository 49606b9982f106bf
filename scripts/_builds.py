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
from collections.abc import Iterator
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

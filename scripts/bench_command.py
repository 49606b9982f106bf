"""The installed ``tritontui`` command (the app inside the Python
extension) beside the cargo binary, taking turns: start-up (``--version``)
and a diff of the demo pair. Prints the median wall time of each and
their ratio.

    python scripts/bench_command.py [--binary target/release/tritontui] [--runs 30]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "assets" / "demo"


def wall(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=str(ROOT / "target" / "release" / "tritontui"))
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    installed = shutil.which("tritontui", path=str(Path(sys.executable).parent))
    if installed is None:
        sys.exit("bench_command: no tritontui command beside this Python (pip install ./recorder)")
    tasks = {
        "start-up (--version)": ["--version"],
        "diff of the demo pair": ["diff", str(DEMO / "run0.msgpack"), str(DEMO / "run1.msgpack")],
    }
    for task, rest in tasks.items():
        times: dict[str, list[float]] = {"installed": [], "cargo": []}
        for _ in range(args.runs):
            times["installed"].append(wall([installed, *rest]))
            times["cargo"].append(wall([args.binary, *rest]))
        a, b = (statistics.median(times[k]) * 1e3 for k in ("installed", "cargo"))
        print(f"{task:24} installed {a:7.1f} ms   cargo {b:7.1f} ms   {a / b:5.1f}x")


if __name__ == "__main__":
    main()

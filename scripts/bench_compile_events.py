"""What recording Dynamo's structured compile events costs a compilation:
the corpus's small GPT compiled from scratch (Inductor's caches off) and
run forward and backward once, in fresh processes, without and with the
recorder's handler on the ``torch.__trace`` logger (and nothing else of
the recorder), taking turns.

    python scripts/bench_compile_events.py [ROUNDS]     # 3 by default
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parent.parent / "tests/corpus/programs"
ONE = f"""
import sys, time, torch
sys.path.insert(0, {str(PROGRAMS)!r})
from _gpt import GPT
torch.manual_seed(0)
if sys.argv[1] == "handler":
    from tritontui.hooks import compile_events
    compile_events.install()
model = torch.compile(GPT(2048))
x = torch.randint(0, 2048, (8, 16))
start = time.perf_counter()
model(x).sum().backward()
print(time.perf_counter() - start)
"""


def compile_seconds(mode: str) -> float:
    env = {**os.environ, "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}
    out = subprocess.run(
        [sys.executable, "-c", ONE, mode], env=env, capture_output=True, text=True, check=True
    )
    return float(out.stdout.split()[-1])


if __name__ == "__main__":
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    seen: dict[str, list[float]] = {"without": [], "handler": []}
    for _ in range(rounds):
        for mode in seen:
            seen[mode].append(compile_seconds(mode))
    for mode, times in seen.items():
        print(f"{mode:8} " + " ".join(f"{t:6.2f}" for t in times) + " s")
    ratio = statistics.median(seen["handler"]) / statistics.median(seen["without"])
    print(f"compile + first step with the compile-event handler: {ratio:.2f}x (medians)")

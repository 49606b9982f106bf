"""Helpers for the recorder's end-to-end tests: run a program in its own
process (as a real recording is made), then read the traces back with the
tritontui binary."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).parent / "programs"
# On PYTHONPATH, makes every Python process write what Dynamo compiled
# (compile_probe/sitecustomize.py).
COMPILE_PROBE = Path(__file__).parent / "compile_probe"
# torchrun starting two ranks on this host.
TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]

# Inductor checks the vector ISAs the CPU reports, each by loading a test
# library in a fresh Python that imports torch (torch/_inductor/
# cpu_vec_isa.py): about 10 s of every process's first C++ kernel on a
# 2-core machine, most of what a small program's run costs. The suite's
# processes take the CPU's word for the base ISAs (Inductor's
# TORCHINDUCTOR_VEC_ISA_OK=1; it still loads its bf16 and VNNI probes) and
# pick the same one; `test_recording_does_not_change_the_results` records
# with every check made (VEC_ISA_CHECKED), as a user's program runs.
os.environ.setdefault("TORCHINDUCTOR_VEC_ISA_OK", "1")
VEC_ISA_CHECKED = {"TORCHINDUCTOR_VEC_ISA_OK": ""}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")
    config.addinivalue_line(
        "markers", "internal_error: makes the recorder stop on an internal error on purpose"
    )


# Traces larger than this are not read back for their end record (a
# recording's internal error is a code path, met in small traces too).
CHECKED_TRACE_BYTES = 32 << 20


@pytest.fixture(autouse=True)
def no_internal_error(request: pytest.FixtureRequest, tmp_path: Path):
    """Fails a test any of whose recordings (the traces it leaves in its
    ``tmp_path``) stopped on an internal error: the recorder records every
    program of this suite to the end, unless a test provokes an error on
    purpose (``@pytest.mark.internal_error``)."""
    yield
    if request.node.get_closest_marker("internal_error"):
        return
    for trace in sorted(tmp_path.rglob("*.msgpack")):
        if not trace.is_file() or trace.stat().st_size > CHECKED_TRACE_BYTES:
            continue
        proc = subprocess.run([binary(), "dump", str(trace)], capture_output=True, text=True)
        last = proc.stdout.rstrip().rpartition("\n")[2]
        end = json.loads(last) if last.startswith("{") else {}
        reason = str(end.get("reason", "")) if end.get("type") == "end" else ""
        assert not reason.startswith("error"), f"{trace}: recording stopped: {reason}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except Exception:
        has_cuda = False
    if has_cuda:
        return
    skip = pytest.mark.skip(reason="no CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def run_ok(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Runs ``command`` (a program, torchrun) and checks that it succeeded."""
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def with_compile_probe(env: dict[str, str], events: Path) -> dict[str, str]:
    """``env`` in which every Python process writes what Dynamo compiled
    to ``events`` (``{rank}`` filled in: torchrun's rank, else
    ``launcher``) when it exits."""
    path = os.pathsep.join(p for p in (str(COMPILE_PROBE), env.get("PYTHONPATH")) if p)
    return {**env, "PYTHONPATH": path, "DYNAMO_EVENTS": str(events)}


def binary() -> str:
    """The tritontui binary: $TRITONTUI_BIN, else the workspace's build."""
    found = os.environ.get("TRITONTUI_BIN")
    if found:
        return found
    for profile in ("debug", "release"):
        path = ROOT / "target" / profile / "tritontui"
        if path.exists():
            return str(path)
    subprocess.run(["cargo", "build", "-q", "-p", "tritontui"], cwd=ROOT, check=True)
    return str(ROOT / "target" / "debug" / "tritontui")


@pytest.fixture(scope="session")
def inductor_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Inductor cache for the session, shared by pytest-xdist's
    workers: the first run of a program compiles, later runs load from
    the cache (both paths are hooked)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the workers' folders lie side by side in it
    cache = root / "inductor-cache"
    cache.mkdir(exist_ok=True)
    return cache


@pytest.fixture
def run_program(inductor_cache: Path, tmp_path: Path):
    def run(name: str, *args: str, env: dict[str, str] | None = None, check: bool = True):
        full_env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache), **(env or {})}
        full_env.pop("TRITONTUI_RECORD", None)
        proc = subprocess.run(
            [sys.executable, str(PROGRAMS / name), *args],
            cwd=tmp_path,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"{name} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    return run


def check(
    tmp_path: Path, cache: Path, program: str | Path, *flags: str, ranks: int = 0
) -> subprocess.CompletedProcess:
    """``tritontui check [flags] -- python PROGRAM`` (a name in programs/,
    or a path), its kernels (and their reruns alone) on two threads; with
    ``ranks``, PROGRAM runs under torchrun on that many ranks."""
    launcher = [*TORCHRUN[1:-1], f"--nproc_per_node={ranks}"] if ranks else []
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache), "OMP_NUM_THREADS": "2"}
    return subprocess.run(
        [
            binary(),
            "check",
            "--dir",
            str(tmp_path / "runs"),
            *flags,
            "--",
            sys.executable,
            *launcher,
            str(PROGRAMS / program),  # an absolute path stays as it is
        ],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=900,
        check=False,
    )


def diff(a: Path, b: Path) -> tuple[int, dict]:
    """`tritontui diff --json`: (exit status, report)."""
    proc = subprocess.run(
        [binary(), "diff", "--json", str(a), str(b)], capture_output=True, text=True
    )
    assert proc.returncode in (0, 1, 3), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def repro(
    trace: Path, seq: int, folder: Path, runs: int, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """`tritontui repro` of launch ``seq`` of ``trace`` into ``folder`` (which
    must succeed), then its script run ``runs`` times."""
    command = [binary(), "repro", str(trace), "--launch", str(seq), "-o", str(folder)]
    made = subprocess.run(command, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    script = [sys.executable, str(folder / "repro.py"), "--runs", str(runs)]
    return subprocess.run(script, capture_output=True, text=True, env=env, timeout=300)


def dump(trace: Path) -> list[dict]:
    """`tritontui dump`: every record of a trace."""
    proc = subprocess.run([binary(), "dump", str(trace)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def launches(trace: Path) -> list[dict]:
    return [r for r in dump(trace) if r["type"] == "launch"]


@pytest.fixture
def tritontui_binary() -> str:
    return binary()


def have(tool: str) -> bool:
    return shutil.which(tool) is not None


WAIT_S = 180


class Paused:
    """``tritontui record --break SPEC -- python pausable.py``, waited for
    until its process is paused."""

    def __init__(
        self,
        tmp_path: Path,
        cache: Path,
        spec: str = "1",
        program: str = "pausable.py",
        aten: bool = False,
    ) -> None:
        self.trace = tmp_path / "t.msgpack"
        self.err = (tmp_path / "stderr").open("w")
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache)}
        env.pop("TRITONTUI_BREAK", None)
        self.proc = subprocess.Popen(
            [
                binary(),
                "record",
                "-o",
                str(self.trace),
                *([] if aten else ["--no-aten"]),
                "--break",
                spec,
                "--",
                sys.executable,
                str(PROGRAMS / program),
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=self.err,
            text=True,
        )
        self.pid, self.line = self.wait_paused()

    def wait_paused(self) -> tuple[int, str]:
        """(pid, line of `attach --list`) of the first paused process."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                records = [r for r in dump(self.trace) if r["type"] != "kernel"]
                raise AssertionError(
                    f"it ended without pausing: {Path(self.err.name).read_text()}\n"
                    + "\n".join(map(str, records[:40]))
                )
            if self.trace.exists():
                listed = attach("--list", self.trace)
                for line in listed.stdout.splitlines():
                    if "paused before" in line or "paused compiling" in line:
                        return int(line.split()[0]), line
            time.sleep(0.5)
        raise AssertionError("the program never paused")

    def finish(self) -> str:
        out, _ = self.proc.communicate(timeout=WAIT_S)
        assert self.proc.returncode == 0, Path(self.err.name).read_text()
        return out

    def pauses(self) -> list[dict]:
        return [r for r in dump(self.trace) if r["type"] == "pause"]

    def kill(self) -> None:
        if self.proc.poll() is None:
            subprocess.run([binary(), "resume", str(self.trace)], check=False)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def attach(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary(), "attach", *map(str, args)], capture_output=True, text=True, check=False
    )


class Tmux:
    """``command`` in a private tmux server's 120x40 pane, followed by
    ``EXIT=<status>``; the server is killed on exit."""

    def __init__(self, command: str, env: dict[str, str] | None = None) -> None:
        self.socket = f"tritontui-py-{os.getpid()}-{time.monotonic_ns()}"
        subprocess.run(
            [
                "tmux",
                "-L",
                self.socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "120",
                "-y",
                "40",
                "-s",
                "e2e",
                "bash",
                "--norc",
                "--noprofile",
                "-c",
                f"{command}; echo EXIT=$?; sleep 600",
            ],
            env=env,
            check=True,
        )

    def __enter__(self) -> Tmux:
        return self

    def __exit__(self, *exc: object) -> None:
        self.tmux("kill-server")

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False
        ).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "e2e")

    def send(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "e2e", *keys)

    def type(self, line: str) -> None:
        self.tmux("send-keys", "-t", "e2e", "-l", line)
        self.send("Enter")

    def wait_for(self, needle: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if needle in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{needle!r} never appeared:\n{screen}")

    def wait_until_gone(self, needle: str, timeout: float = 60) -> str:
        """Waits until the screen no longer shows ``needle``."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if needle not in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{needle!r} never went away:\n{screen}")

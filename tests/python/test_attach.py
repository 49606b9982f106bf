"""Pause points and debugger attach, end to end with the real gdb: a
recorded program stops before a chosen launch, gdb finds it in the
recorder's wait, and each way of resuming lets it finish with a complete
trace. The hand-over test drives the TUI in tmux."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import WAIT_S, Paused, attach, binary, dump, launches

pytestmark = pytest.mark.skipif(shutil.which("gdb") is None, reason="needs gdb")


@pytest.fixture
def paused(tmp_path: Path, inductor_cache: Path):
    p = Paused(tmp_path, inductor_cache)
    yield p
    p.kill()


def test_gdb_finds_the_paused_process_and_resume_completes_the_trace(paused: Paused) -> None:
    assert re.search(r"main\s+\S+\s+yes\s+paused before #1 cpp_fused_", paused.line), paused.line
    err = Path(paused.err.name).read_text()
    assert f"pid {paused.pid} paused before launch #1" in err and "tritontui resume" in err
    gdb = subprocess.run(
        ["gdb", "-nx", "-batch", "-p", str(paused.pid), "-ex", "bt"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "tritontui_paused" in gdb.stdout, gdb.stdout + gdb.stderr
    # gdb detached without continuing: still paused.
    time.sleep(0.5)
    assert "paused before #1" in attach("--list", paused.trace).stdout
    resumed = subprocess.run(
        [binary(), "resume", str(paused.trace)], capture_output=True, text=True, check=False
    )
    assert resumed.returncode == 0 and f"resumed pid {paused.pid}" in resumed.stderr
    assert "done" in paused.finish()
    assert [(p["state"], p["by"]) for p in paused.pauses()] == [("paused", ""), ("resumed", "file")]
    records = dump(paused.trace)
    assert records[-1]["type"] == "end" and records[-1]["complete"]
    assert [r["seq"] for r in launches(paused.trace)] == [0, 1, 2]
    # Ended now: attaching says how to stop it again.
    ended = attach(paused.trace, "--pid", paused.pid)
    assert ended.returncode == 2 and "--break" in ended.stderr, ended.stderr


def test_a_debugger_that_continues_resumes_it(paused: Paused) -> None:
    gdb = subprocess.run(
        ["gdb", "-nx", "-batch", "-p", str(paused.pid), "-ex", "continue"],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )
    assert "done" in paused.finish(), gdb.stdout + gdb.stderr
    assert paused.pauses()[-1]["by"] == "debugger"


def test_sigusr1_resumes_it(paused: Paused) -> None:
    os.kill(paused.pid, signal.SIGUSR1)
    assert "done" in paused.finish()
    assert paused.pauses()[-1]["by"] == "signal"


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_the_tui_hands_the_terminal_to_gdb_and_gets_it_back(paused: Paused) -> None:
    socket = f"tritontui-attach-{os.getpid()}"

    def tmux(*args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", socket, *args], capture_output=True, text=True, check=False
        ).stdout

    def wait_for(needle: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = tmux("capture-pane", "-p", "-t", "e2e")
            if needle in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{needle!r} never appeared:\n{screen}")

    env = {k: v for k, v in os.environ.items() if k != "TRITONTUI_DEBUGGER"}
    command = f"{binary()} {paused.trace}; echo EXIT=$?; sleep 60"
    subprocess.run(
        [
            "tmux",
            "-L",
            socket,
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
            command,
        ],
        env=env,
        check=True,
    )
    try:
        before = wait_for("one trace: browsing")
        tmux("send-keys", "-t", "e2e", "a")
        listed = wait_for("attach a debugger")
        assert f"{paused.pid}" in listed and "paused before #1" in listed, listed
        tmux("send-keys", "-t", "e2e", "Enter")
        wait_for("(gdb)", timeout=120)
        assert "tritontui_paused" in wait_for("tritontui_paused")
        tmux("send-keys", "-t", "e2e", "-l", "quit")
        tmux("send-keys", "-t", "e2e", "Enter")
        time.sleep(0.5)
        if "(y or n)" in tmux("capture-pane", "-p", "-t", "e2e"):
            tmux("send-keys", "-t", "e2e", "y", "Enter")
        back = wait_for("back in tritontui")
        # The TUI is back as it was: same header and list, list refreshed.
        header = before.splitlines()[0]
        assert back.splitlines()[0] == header, back
        assert "attach a debugger" in back and "paused before #1" in back, back
        tmux("send-keys", "-t", "e2e", "Escape")
        tmux("send-keys", "-t", "e2e", "q")
        assert "EXIT=0" in wait_for("EXIT=")
    finally:
        tmux("kill-server")

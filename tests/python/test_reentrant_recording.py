"""What once stopped a recording and no longer does. A hook that fires
inside another, or on another thread, while the trace is held: a host
argument's ``repr`` that records a marker while a launch's arguments
are described, another thread's host read meanwhile. The trace refused
them ("Already mutably borrowed"); now a record made then is written by
the holder, and another thread waits for it. A launch whose arguments
cannot be described runs unrecorded, a gap in the trace in its place."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import torch
import tritontui
from conftest import binary, dump
from tritontui import _active


class _Marking:
    """A host argument whose ``repr`` records a marker (and, given an
    event, waits for another thread meanwhile)."""

    def __init__(self, meanwhile: threading.Event | None = None) -> None:
        self.meanwhile = meanwhile

    def __repr__(self) -> str:
        tritontui.mark("inside a describe")
        if self.meanwhile is not None:
            # Sleeps with the GIL released: the other thread runs now.
            self.meanwhile.set()
            time.sleep(0.3)
        return "marking"


def _launch_host_argument(value: object) -> None:
    """Records a launch of a kernel taking ``value`` and a tensor."""
    session = _active.active()
    described = session.describe([value, torch.ones(4)], b"ii")
    kernel = session.kernel_id(
        ("test", "host"),
        lambda: {
            "name": "host_argument",
            "backend": "aten",
            "args": [
                {"name": "what", "type": "", "access": "in"},
                {"name": "x", "type": "", "access": "in"},
            ],
            "source": None,
            "meta": {},
            "config": {},
        },
    )
    session.launch(kernel, [], 0, described)


def _host_argument(records: list[dict]) -> str:
    """What the trace recorded as that launch's host argument."""
    launch = next(r for r in records if r["type"] == "launch" and r["kernel"] == "host_argument")
    return launch["args"][0]["value"]


def _stopped_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "recording stopped" in str(w.message)]


def test_a_record_made_inside_a_describe_is_written(tmp_path: Path) -> None:
    path = tmp_path / "t.msgpack"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tritontui.record(path):
            _launch_host_argument(_Marking())
            y = torch.ones(4) * 2
    assert not _stopped_warnings(caught), _stopped_warnings(caught)
    records = dump(path)
    markers = [r for r in records if r["type"] == "marker"]
    assert [m["label"] for m in markers] == ["inside a describe"], markers
    assert _host_argument(records) == "marking"
    assert records[-1]["reason"] == "stopped", records[-1]
    assert torch.equal(y, torch.full((4,), 2.0))


def test_a_host_argument_whose_repr_fails_is_recorded_by_its_type(tmp_path: Path) -> None:
    class Unprintable:
        def __repr__(self) -> str:
            raise ValueError("no repr here")

    path = tmp_path / "t.msgpack"
    with tritontui.record(path):
        _launch_host_argument(Unprintable())
    records = dump(path)
    assert _host_argument(records).endswith(".Unprintable>"), _host_argument(records)
    assert records[-1]["reason"] == "stopped", records[-1]


def test_another_thread_records_while_a_describe_holds_the_trace(tmp_path: Path) -> None:
    path = tmp_path / "t.msgpack"
    meanwhile = threading.Event()
    read: list[list[float]] = []

    def other() -> None:
        meanwhile.wait(10)
        # A host read (hooked in every thread) and a marker: both need the
        # trace the main thread holds.
        read.append(torch.arange(4.0).tolist())
        tritontui.mark("from the other thread")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tritontui.record(path):
            session = _active.active()
            thread = threading.Thread(target=other)
            thread.start()
            session.describe([_Marking(meanwhile)], b"i")
            thread.join()
    assert not _stopped_warnings(caught), _stopped_warnings(caught)
    records = dump(path)
    labels = {r["label"] for r in records if r["type"] == "marker"}
    assert labels == {"inside a describe", "from the other thread"}, labels
    kernels = [r["kernel"] for r in records if r["type"] == "launch"]
    assert "Tensor.tolist" in kernels, kernels
    assert records[-1]["reason"] == "stopped", records[-1]
    assert read == [[0.0, 1.0, 2.0, 3.0]]


def test_a_launch_that_cannot_be_described_is_a_gap_and_recording_goes_on(
    tmp_path: Path,
) -> None:
    # Stands in for an argument the recorder cannot describe: the function
    # describing host arguments fails on generators.
    script = tmp_path / "undescribable.py"
    script.write_text(
        "import torch, tritontui\n"
        "from tritontui import _host\n"
        "describe = _host.host_value\n"
        "def failing(value):\n"
        "    if isinstance(value, torch.Generator):\n"
        "        raise ValueError('cannot describe')\n"
        "    return describe(value)\n"
        "_host.host_value = failing\n"
        "g = torch.Generator().manual_seed(0)\n"
        f"with tritontui.record({str(tmp_path / 't.msgpack')!r}):\n"
        "    x = torch.randn(8, generator=g) + torch.randn(8, generator=g)\n"
        "    y = (x * 2).sum()\n"
        "print(y.item())\n"
    )
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "recording stopped" not in proc.stderr, proc.stderr
    assert proc.stderr.count("could not be recorded") == 1, proc.stderr
    records = dump(tmp_path / "t.msgpack")
    gaps = [r for r in records if r["type"] == "gap"]
    assert [g["what"] for g in gaps] == ["launch", "launch"], gaps
    assert "aten::randn (ValueError('cannot describe'))" in gaps[0]["detail"], gaps
    kernels = [r["kernel"] for r in records if r["type"] == "launch"]
    assert kernels[-3:] == ["aten::add.Tensor", "aten::mul.Tensor", "aten::sum"], kernels
    assert records[-1]["reason"] == "stopped", records[-1]
    same = subprocess.run(
        [binary(), "diff", str(tmp_path / "t.msgpack"), str(tmp_path / "t.msgpack")],
        capture_output=True,
        text=True,
    )
    assert same.returncode == 3, same.stdout + same.stderr
    assert "aten::randn (ValueError('cannot describe')) (2 times)" in same.stdout, same.stdout

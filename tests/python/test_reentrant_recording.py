"""A hook that fires inside another, or on another thread, while the
trace is held: a host argument's ``repr`` that records a marker while a
launch's arguments are described, another thread's op meanwhile. The
trace once refused them ("Already mutably borrowed") and recording
stopped; now a record made then is written by the holder, and another
thread waits for it."""

from __future__ import annotations

import threading
import time
import warnings
from pathlib import Path

import torch
import tritontui
from conftest import dump
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

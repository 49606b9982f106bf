"""The native observer reads most ops' values with no Python object made
(``recorder/src/python/observed_values.rs``, ``observer/values.cpp``):
their records must be the ones the same ops give when every call is made
Python objects (``TRITONTUI_ATEN_NATIVE=0``), argument by argument,
hashes included, and the ops it cannot read so must still go through
Python."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
import tritontui
from conftest import PROGRAMS, dump
from tritontui import _native

_SPEC = importlib.util.spec_from_file_location("native_ops", PROGRAMS / "native_ops.py")
native_ops = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(native_ops)

# Launch fields that differ between two recordings of one program: where
# memory was, when and on which thread (autograd's) it ran.
_PLACES = {"ptr", "ts", "thread"}


def _recorded(trace: Path, device: str) -> tuple[list[dict], int]:
    """The kernel and launch records of `native_ops` recorded into
    ``trace``, without where and when; and how many claimed ops were
    made Python objects (the observer's `observer call` phase)."""
    with tritontui.record(trace):
        _native.time_phases(True)
        native_ops.ops(device)
        if device == "cuda":
            torch.cuda.synchronize()
        through_python = {name: count for name, _, count in _native.phase_times()}
        _native.time_phases(False)
    records = []
    for record in dump(trace):
        if record["type"] not in ("kernel", "launch"):
            continue
        record = {k: v for k, v in record.items() if k not in _PLACES}
        for arg in record.get("args", []):
            for place in _PLACES & arg.keys():
                del arg[place]
        records.append(record)
    return records, through_python["observer call"]


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_ops_read_natively_are_recorded_as_through_python(
    device: str, tmp_path: Path, monkeypatch
) -> None:
    native, made_python = _recorded(tmp_path / "native.msgpack", device)
    monkeypatch.setenv("TRITONTUI_ATEN_NATIVE", "0")
    through_python, all_python = _recorded(tmp_path / "python.msgpack", device)
    assert len(native) == len(through_python)
    for seq, (a, b) in enumerate(zip(native, through_python, strict=True)):
        assert a == b, f"record {seq}:\n  native {a}\n  python {b}"
    launched = [r for r in native if r["type"] == "launch"]
    assert all_python >= len(launched) > 2 * made_python, (all_python, made_python)
    kernels = {r["kernel"] for r in launched}
    # Ops whose values or plan need Python, recorded all the same.
    assert {"aten::_to_copy", "aten::rand", "aten::mm"} <= kernels, kernels
    hashed = [a for r in launched for a in r["args"] if a.get("post") is not None]
    assert len(hashed) > 40, len(hashed)


def test_an_out_argument_returned_is_not_a_new_result(tmp_path: Path) -> None:
    y, out = torch.ones(4), torch.empty(4)
    with tritontui.record(tmp_path / "t.msgpack"):
        torch.add(y, y, out=out)
        torch.add(y, y)
    first, second = [r for r in dump(tmp_path / "t.msgpack") if r["type"] == "launch"]
    assert [a["name"] for a in first["args"]] == ["self", "other", "out"], first
    assert [a["name"] for a in second["args"]] == ["self", "other", "result"], second

"""What decides a launch's numerics besides its code and inputs is
recorded where it acts: a numerics flag switched after recording began
(a ``settings`` record before the op it changes), and the state of the
random generator an op draws from (its ``default_generator`` input)."""

from __future__ import annotations

import warnings

import pytest
import torch
import tritontui
from conftest import dump, launches


def test_a_setting_switched_while_recording_is_recorded_where_it_acts(tmp_path):
    trace = tmp_path / "t.msgpack"
    x = torch.randn(1 << 16)
    threads = torch.get_num_threads()
    try:
        with tritontui.record(trace):
            x.sum()
            torch.set_num_threads(1)
            x.mul(2)  # not changed by the thread count: not sampled
            x.sum()
    finally:
        torch.set_num_threads(threads)
    records = dump(trace)
    header = records[0]
    assert header["settings"]["torch.num_threads"] == str(threads)
    sums = [r["seq"] for r in records if r["type"] == "launch" and r["kernel"] == "aten::sum"]
    changes = [r for r in records if r["type"] == "settings"]
    assert [(c["before"], c["values"]["torch.num_threads"]) for c in changes] == [(sums[1], "1")]


def test_a_text_and_an_enum_setting_switched_while_recording_are_recorded(tmp_path):
    # The sampler keeps a text (the matmul precision) and one of torch's
    # enums (the preferred BLAS library) as values of its own: a switch of
    # either is seen, and so is switching back.
    trace = tmp_path / "t.msgpack"
    x = torch.randn(64, 64)
    precision = torch.get_float32_matmul_precision()
    library = torch.backends.cuda.preferred_blas_library()
    other = "Cublas" if str(library).endswith("Cublaslt") else "Cublaslt"
    try:
        with tritontui.record(trace), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the BLAS choice is experimental
            x.mm(x)
            torch.set_float32_matmul_precision("medium")
            x.mm(x)
            torch.backends.cuda.preferred_blas_library(other.lower())
            x.mm(x)
            torch.backends.cuda.preferred_blas_library(library)
            x.mm(x)
    finally:
        torch.set_float32_matmul_precision(precision)
        torch.backends.cuda.preferred_blas_library(library)
    records = dump(trace)
    blas = "torch.backends.cuda.preferred_blas_library"
    first = records[0]["settings"][blas]
    mms = [r["seq"] for r in records if r["type"] == "launch" and r["kernel"] == "aten::mm"]
    changes = [
        (c["before"], c["values"]["torch.float32_matmul_precision"], c["values"][blas])
        for c in records
        if c["type"] == "settings"
    ]
    assert changes == [
        (mms[1], "medium", first),
        (mms[2], "medium", f"_BlasBackend.{other}"),
        (mms[3], "medium", first),
    ]


def test_an_environment_variable_set_while_recording_is_recorded_where_it_acts(
    tmp_path, monkeypatch
):
    trace = tmp_path / "t.msgpack"
    x = torch.randn(1 << 16)
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    with tritontui.record(trace):
        x.sum()
        monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        x.sum()
    records = dump(trace)
    assert "env.CUBLAS_WORKSPACE_CONFIG" not in records[0]["settings"]
    sums = [r["seq"] for r in records if r["type"] == "launch" and r["kernel"] == "aten::sum"]
    changes = [r for r in records if r["type"] == "settings"]
    assert [(c["before"], c["values"].get("env.CUBLAS_WORKSPACE_CONFIG")) for c in changes] == [
        (sums[1], ":4096:8")
    ]


def test_a_random_op_records_the_generator_it_draws_from(tmp_path):
    trace = tmp_path / "t.msgpack"
    torch.manual_seed(5)
    with tritontui.record(trace):
        torch.randn(8)
        torch.randn(8)
        torch.randn(8, generator=torch.Generator().manual_seed(3))
    states = [
        next(a["value"] for a in r["args"] if a["name"] == "default_generator")
        for r in launches(trace)
        if r["kernel"].startswith("aten::randn")
    ]
    assert len(states) == 3, states
    assert states[0].startswith("<default generator cpu seed=5 state=")
    # The first draw moved the generator on.
    assert states[1].startswith("<default generator cpu seed=5 state=") and states[1] != states[0]
    assert states[2] == "<generator given>"


@pytest.mark.gpu
def test_a_cuda_random_op_records_the_seed_and_offset_it_draws_from(tmp_path):
    trace = tmp_path / "t.msgpack"
    torch.cuda.manual_seed(5)
    with tritontui.record(trace):
        torch.randn(1024, device="cuda")
        torch.nn.functional.dropout(torch.ones(1024, device="cuda"), 0.5)
    torch.cuda.synchronize()
    states = [
        next(a["value"] for a in r["args"] if a["name"] == "default_generator")
        for r in launches(trace)
        if any(a["name"] == "default_generator" for a in r["args"])
    ]
    assert states[0] == "<default generator cuda:0 seed=5 offset=0>", states
    # The first draw moved the Philox offset on.
    assert (
        states[1].startswith("<default generator cuda:0 seed=5 offset=") and states[1] != states[0]
    )


@pytest.mark.gpu
def test_tf32_switched_on_while_recording_is_recorded_at_the_graph_call(tmp_path):
    trace = tmp_path / "t.msgpack"
    f = torch.compile(lambda a, b: a @ b)
    a, b = torch.randn(64, 64, device="cuda"), torch.randn(64, 64, device="cuda")
    before = torch.backends.cuda.matmul.allow_tf32
    try:
        with tritontui.record(trace):
            torch.backends.cuda.matmul.allow_tf32 = True
            f(a, b)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before
    records = dump(trace)
    assert records[0]["settings"]["torch.backends.cuda.matmul.allow_tf32"] == str(before)
    changes = [r for r in records if r["type"] == "settings"]
    assert changes and changes[0]["values"]["torch.backends.cuda.matmul.allow_tf32"] == "True"

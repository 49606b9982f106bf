"""What decides a launch's numerics besides its code and inputs is
recorded where it acts: a numerics flag switched after recording began
(a ``settings`` record before the op it changes), and the state of the
random generator an op draws from (its ``default_generator`` input)."""

from __future__ import annotations

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

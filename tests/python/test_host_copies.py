"""Bytes a device tensor hands to the host are part of the program's
results: a device-to-host copy (``.cpu()``, ``.to("cpu")``, a host
tensor's ``copy_``) is recorded as a kernel that reads to the host, a
host-to-device copy is not."""

from __future__ import annotations

import pytest
import torch
import tritontui
from conftest import dump


@pytest.mark.gpu
def test_device_to_host_copies_are_host_reads(tmp_path):
    trace = tmp_path / "t.msgpack"
    host = torch.randn(256)
    with tritontui.record(trace):
        device = host.cuda()  # to the device: _to_copy
        back = device.mul(2).cpu()  # to the host: _to_copy
        torch.empty(256).copy_(device)  # to the host: copy_
        device.copy_(back)  # to the device: copy_
    torch.cuda.synchronize()
    kernels = [r for r in dump(trace) if r["type"] == "kernel"]
    host_reads = sorted(
        (k["name"], bool(k["meta"].get("host_read")))
        for k in kernels
        if k["name"] in ("aten::_to_copy", "aten::copy_")
    )
    assert host_reads == [
        ("aten::_to_copy", False),
        ("aten::_to_copy", True),
        ("aten::copy_", False),
        ("aten::copy_", True),
    ], host_reads

"""Launch arguments as the native describer reads them: straight from
torch's TensorImpl once probing has found its fields, checked against the
tensors' own attributes."""

from __future__ import annotations

from pathlib import Path

import torch
import tritontui
from conftest import launches
from tritontui import _native, _tensors


def _inputs() -> list[torch.Tensor]:
    base = torch.arange(4096, dtype=torch.float32)
    inputs = [
        torch.randn(6, 5),
        torch.randn(6, 5).t(),
        base[7:].as_strided((3, 4, 5), (40, 1, 4)),
        torch.randn(2, 1, 2, 1, 2, 1, 3),  # past the inline dimensions
        torch.tensor(3.5),
        torch.empty(0, 4),
        torch.nn.Parameter(torch.randn(3, 3)),
        torch.randn(8).expand(4, 8),
    ]
    for dtype in (
        torch.float16,
        torch.bfloat16,
        torch.float64,
        torch.int8,
        torch.uint8,
        torch.int32,
        torch.int64,
        torch.bool,
        torch.complex64,
        torch.float8_e4m3fn,
    ):
        inputs.append(torch.ones(5, 3).to(dtype)[:, 1:])
    return inputs


def test_arguments_read_from_the_tensor_impl_match_their_attributes(tmp_path: Path) -> None:
    path = tmp_path / "t.msgpack"
    inputs = _inputs()
    with tritontui.record(path, hash="inputs"):
        for t in inputs:
            t.clone()
    # Every read was made the fast way, and the first ones (and spot
    # checks) were compared with the attributes: a disagreement turns it off.
    assert _native.fast_tensor_reads()
    recorded = [r for r in launches(path) if r["kernel"] == "aten::clone"]
    assert len(recorded) == len(inputs)
    for t, launch in zip(inputs, recorded, strict=True):
        arg = launch["args"][0]
        assert arg["dtype"] == _tensors.dtype_name(t)
        assert arg["shape"] == list(t.shape) and arg["stride"] == list(t.stride())
        assert int(arg["ptr"], 16) == t.data_ptr()
        assert int(arg["pre"], 16) == tritontui.hash_tensor(t)


def test_tensors_unlike_the_probes_take_the_attribute_path(tmp_path: Path) -> None:
    path = tmp_path / "t.msgpack"
    sparse = torch.eye(3).to_sparse()
    with tritontui.record(path, hash="inputs"):
        torch.randn(3).clone()
        sparse.clone()
    assert _native.fast_tensor_reads()
    dense, from_sparse = [r for r in launches(path) if r["kernel"] == "aten::clone"]
    assert dense["args"][0]["shape"] == [3]
    assert "value" in from_sparse["args"][0]  # recorded by its repr

"""tthash64-v1: the native hash agrees with the spec (docs/hashing.md)
written out here in plain Python, with the pinned vectors, and hashes a
tensor's logical bytes whatever its strides."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import tritontui
from conftest import launches
from tritontui import _native

MASK = (1 << 64) - 1
VECTORS = Path(__file__).resolve().parents[2] / "trace" / "tests" / "hash_vectors.txt"


def reference(data: bytes) -> int:
    """docs/hashing.md, line by line."""
    total = 0
    for i in range(0, len(data), 8):
        word = int.from_bytes(data[i : i + 8].ljust(8, b"\0"), "little")
        key = (0x243F6A8885A308D3 + (i // 8 + 1) * 0x9E3779B97F4A7C15) & MASK
        x = word ^ key
        rot = ((x << 32) | (x >> 32)) & MASK
        total = (total + (x & 0xFFFFFFFF) * (x >> 32) + rot) & MASK
    h = total ^ ((len(data) * 0xC2B2AE3D27D4EB4F) & MASK)
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & MASK
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & MASK
    return h ^ (h >> 33)


def test_the_pinned_vectors_match_the_spec_and_the_extension() -> None:
    lines = [
        line.split()
        for line in VECTORS.read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert len(lines) == 11
    for length, expected in lines:
        data = bytes((i * 31 + 7) % 251 for i in range(int(length)))
        assert reference(data) == int(expected, 16), length
        assert tritontui.hash_bytes(data) == int(expected, 16), length


def logical_bytes(t: torch.Tensor) -> bytes:
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""


DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.float8_e4m3fn,
    torch.int8,
    torch.int32,
    torch.int64,
    torch.uint8,
    torch.bool,
    torch.complex64,
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_hashes_its_bytes(dtype: torch.dtype) -> None:
    base = torch.randn(6, 10) * 4
    t = base.to(dtype) if dtype != torch.bool else base > 0
    assert tritontui.hash_tensor(t) == reference(logical_bytes(t))


def test_a_view_hashes_its_own_elements() -> None:
    m = torch.arange(60, dtype=torch.float32).reshape(6, 10)
    views = [m.t(), m[::2, 1::3], m[2], m[:, 4], m[0:1].expand(5, 10), m.unsqueeze(1)]
    for v in views:
        assert tritontui.hash_tensor(v) == reference(logical_bytes(v)), v.stride()
        assert tritontui.hash_tensor(v) == tritontui.hash_tensor(v.contiguous())


def test_empty_and_zero_dim_tensors() -> None:
    assert tritontui.hash_tensor(torch.empty(0, 3)) == reference(b"")
    scalar = torch.tensor(2.5)
    assert tritontui.hash_tensor(scalar) == reference(logical_bytes(scalar))


def test_a_one_bit_change_changes_the_hash() -> None:
    t = torch.randn(1000)
    u = t.clone()
    u.view(torch.int32)[517] ^= 1
    assert tritontui.hash_tensor(t) != tritontui.hash_tensor(u)
    # Same values in another order: a different hash.
    assert tritontui.hash_tensor(t) != tritontui.hash_tensor(t.flip(0))


@pytest.mark.parametrize("length", [256 << 10, (1 << 20) + 3, (3 << 20) + 8 * 17 + 5])
def test_a_large_tensor_hashed_on_torchs_threads_hashes_its_bytes(
    length: int, tmp_path: Path
) -> None:
    # From 256 KiB a contiguous host tensor is hashed in pieces on torch's
    # intra-op threads, which the observer library reaches: the pieces'
    # sums must add up to the hash of the whole, a ragged last word too.
    available, why = _native.observer_status()
    assert available, why
    threads = torch.get_num_threads()
    torch.set_num_threads(4)
    try:
        t = torch.randint(0, 256, (length,), dtype=torch.uint8)
        assert tritontui.hash_tensor(t) == tritontui.hash_bytes(t.numpy().tobytes())
        with tritontui.record(tmp_path / "t.msgpack"):
            u = t.add(1)
        (written,) = [
            a for r in launches(tmp_path / "t.msgpack") for a in r["args"] if a.get("written")
        ]
        assert written["post"] == f"{tritontui.hash_bytes(u.numpy().tobytes()):#018x}"
    finally:
        torch.set_num_threads(threads)

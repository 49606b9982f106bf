"""Row hashes (``rows``): each index of a tensor's leading dimension
hashed on its own after each launch, as the tensor it would be alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
import tritontui
from conftest import binary, diff, dump, launches

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def hexed(tensor: torch.Tensor) -> str:
    return f"0x{tritontui.hash_tensor(tensor):016x}"


def rows_of(path: Path, kernel: str) -> list[list[list[str] | None]]:
    """Each launch of ``kernel``: its tensor arguments' row hashes."""
    return [
        [arg.get("rows") for arg in r["args"] if "dtype" in arg]
        for r in launches(path)
        if r["kernel"] == kernel
    ]


@pytest.mark.parametrize("device", DEVICES)
def test_a_row_hashes_as_the_tensor_it_would_be_alone(tmp_path: Path, device: str) -> None:
    batch = torch.randn(8, 3, 5, device=device)
    alone = batch[2:3].clone()  # the request in row 2, alone
    path = tmp_path / "t.msgpack"
    with tritontui.record(path, rows=True):
        doubled = batch * 2
        doubled_alone = alone * 2
        # A strided view's rows are read through its strides.
        across = batch.transpose(0, 1) + 1
        # Rows of 6 bytes: words cross rows, most rows start unaligned.
        narrow = torch.randn(8, 3, device=device).to(torch.bfloat16)
    (batch_rows, alone_rows, across_rows) = rows_of(path, "aten::mul.Tensor") + rows_of(
        path, "aten::add.Tensor"
    )
    assert batch_rows[0] == [hexed(batch[r]) for r in range(8)], batch_rows
    assert batch_rows[-1] == [hexed(doubled[r]) for r in range(8)], batch_rows
    # The same row at another offset hashes the same.
    assert alone_rows[-1] == [batch_rows[-1][2]] == [hexed(doubled_alone[0])], alone_rows
    transposed = batch.transpose(0, 1)
    assert across_rows[0] == [hexed(transposed[r]) for r in range(3)], across_rows
    assert across_rows[-1] == [hexed(across[r]) for r in range(3)], across_rows
    converted = rows_of(path, "aten::_to_copy")[0]
    assert converted[-1] == [hexed(narrow[r]) for r in range(8)], converted


@pytest.mark.parametrize("device", DEVICES)
def test_rows_of_whole_chunks_are_hashed_with_the_tensor_s_own_hash(
    tmp_path: Path, device: str
) -> None:
    # Rows of 128 bytes, of 1.2 MB (a row cut into segments whose sums add
    # up) and of 256 bytes in 1,024 rows: on a GPU an output's rows are
    # hashed in the same read as its own hash, an input's in the table.
    small, long, many = (
        torch.randn(8, 4, 8, device=device),
        torch.randn(3, 300_000, device=device),
        torch.randn(1024, 64, device=device),
    )
    path = tmp_path / "t.msgpack"
    with tritontui.record(path, rows=True):
        outputs = [small * 2, long * 2, many * 2]
    recorded = [r for r in launches(path) if r["kernel"] == "aten::mul.Tensor"]
    for launch, source, output in zip(recorded, (small, long, many), outputs, strict=True):
        read, written = (arg for arg in launch["args"] if "dtype" in arg)
        assert read["rows"] == [hexed(source[r]) for r in range(len(source))]
        assert written["rows"] == [hexed(output[r]) for r in range(len(output))]
        # The whole tensor's hash, taken in the same read.
        assert written["post"] == hexed(output), (written["post"], hexed(output))


def test_rows_are_off_by_default_and_skip_what_has_none_or_too_many(tmp_path: Path) -> None:
    x, many, scalar = torch.randn(4, 2), torch.randn(1025, 2), torch.tensor(3.0)
    with tritontui.record(tmp_path / "off.msgpack"):
        x * 2
    assert all(
        rows is None
        for launch in rows_of(tmp_path / "off.msgpack", "aten::mul.Tensor")
        for rows in launch
    )
    with tritontui.record(tmp_path / "on.msgpack", rows=True):
        many * 2
        scalar * 2
    (too_many, none) = rows_of(tmp_path / "on.msgpack", "aten::mul.Tensor")
    assert too_many == [None, None] and none == [None, None], (too_many, none)


def test_the_command_line_s_rows_flag_turns_them_on(tmp_path: Path) -> None:
    program = "import torch; torch.randn(4, 3) * 2"
    proc = subprocess.run(
        [binary(), "record", "-o", "r.msgpack", "--rows", "--", sys.executable, "-c", program],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    header = dump(tmp_path / "r.msgpack")[0]
    assert header["options"]["rows"] is True, header
    (mul,) = rows_of(tmp_path / "r.msgpack", "aten::mul.Tensor")
    assert len(mul[-1]) == 4, mul


def test_assert_batch_invariant_names_the_kernel_that_makes_a_request_depend_on_its_batch(
    tmp_path: Path,
) -> None:
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(
        torch.nn.LayerNorm(512), torch.nn.Linear(512, 2048), torch.nn.GELU()
    ).eval()

    def fn(x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return mlp(x)

    request = torch.randn(1, 512, generator=torch.Generator().manual_seed(1))
    with pytest.raises(AssertionError) as raised:
        tritontui.assert_batch_invariant(fn, request, sizes=(64,), dir=tmp_path / "mlp")
    said = str(raised.value)
    assert "first batch-variant kernel: aten::addmm" in said, said
    assert "[1, 512]" in said and "[64, 512]" in said, said
    # An elementwise function is batch invariant at every size and place.
    report = tritontui.check_batch_invariance(
        lambda x: x * 2 + 1, request, sizes=(8, 64), dir=tmp_path / "plain"
    )
    assert report.invariant, str(report)
    assert [(c.size, c.position) for c in report.cases] == [(8, 0), (8, 7), (64, 0), (64, 63)]
    assert all(c.first_variant is None for c in report.cases)


def test_a_divergence_names_the_rows_that_differ(tmp_path: Path) -> None:
    base = torch.randn(8, 4, generator=torch.Generator().manual_seed(0))
    for run, bump in (("a", 0.0), ("b", 1.0)):
        x = base.clone()
        x[3] += bump  # run B's row 3 differs
        with tritontui.record(tmp_path / f"{run}.msgpack", rows=True):
            y = x * 2  # a result: alive when recording stops
        del y
    code, report = diff(tmp_path / "a.msgpack", tmp_path / "b.msgpack")
    assert code == 1, report
    rows = {r["arg"]: (r["rows"], r["differing"]) for r in report["first_divergence"]["rows"]}
    assert rows and all(found == (8, [3]) for found in rows.values()), report["first_divergence"]

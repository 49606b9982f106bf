"""Launches captured by value (``record(capture=SEL)``,
``TRITONTUI_CAPTURE``, ``tritontui record --capture SEL``).

``SEL`` is comma-separated launch numbers (``12``), ranges (``40-45``)
and kernel globs (``triton_*red*``). A selected launch's tensor arguments
are copied before it (those it reads) and after it (all but memory it
only hands out): a CPU tensor by a clone, a CUDA tensor into pinned host
memory on the current stream without waiting (a writer thread waits for
the copies' event). Each launch's copies go into one safetensors file
beside the trace, ``TRACE.values/SEQ.safetensors``, as ``I.pre`` and
``I.post`` for argument ``I`` of its launch record, and a ``capture``
record (trace format 1.9) names the file. Why safetensors: it keeps every
dtype exactly (bfloat16 and float8 included, which ``.npy`` cannot hold),
one file holds a launch's tensors with their names, torch loads it with
``safetensors.torch.load_file`` and numpy with ``safetensors.numpy``,
and its layout (a length, a JSON header, the raw bytes) is read without
the package. Capturing stops, saying so once, when the trace's captures
would pass the budget (``TRITONTUI_CAPTURE_BUDGET`` bytes, 2 GB by
default)."""

from __future__ import annotations

import fnmatch
import json
import os
import queue
import struct
import threading
import warnings
from typing import Any

import torch

from . import _active, _tensors

# The default budget of captured bytes per trace.
DEFAULT_BUDGET = 2 << 30

# safetensors' dtype names.
_DTYPES = {
    torch.float64: "F64",
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.int64: "I64",
    torch.int32: "I32",
    torch.int16: "I16",
    torch.int8: "I8",
    torch.uint8: "U8",
    torch.bool: "BOOL",
    torch.float8_e4m3fn: "F8_E4M3",
    torch.float8_e5m2: "F8_E5M2",
}


class Selection:
    """Which launches to capture: numbers, ranges and kernel globs."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.numbers: set[int] = set()
        self.ranges: list[tuple[int, int]] = []
        self.globs: list[str] = []
        for item in (part.strip() for part in text.split(",")):
            if not item:
                continue
            first, dash, last = item.partition("-")
            if first.isdigit() and (not dash or last.isdigit()):
                if dash:
                    self.ranges.append((int(first), int(last)))
                else:
                    self.numbers.add(int(first))
            else:
                self.globs.append(item)
        if not (self.numbers or self.ranges or self.globs):
            raise ValueError(f"capture selects nothing: {text!r}")

    def wants(self, seq: int, kernel: str) -> bool:
        return (
            seq in self.numbers
            or any(a <= seq <= b for a, b in self.ranges)
            or any(fnmatch.fnmatchcase(kernel, g) for g in self.globs)
        )


class Capture:
    """Captures the selected launches of one session's trace."""

    def __init__(self, selection: str, budget: int | None, trace_path: str) -> None:
        self.selection = Selection(selection)
        self.budget = DEFAULT_BUDGET if budget is None else budget
        self.folder = trace_path + ".values"
        self.used = 0
        self.full = False
        self._queue: queue.Queue[Any] = queue.Queue()
        self._writer: threading.Thread | None = None
        self.error: BaseException | None = None

    # -- on the program's thread -------------------------------------------

    def before(self, seq: int, kernel: str, values: list[Any], codes: bytes) -> Any:
        """Copies the tensors launch ``seq`` of ``kernel`` reads, if it is
        selected; returns what :meth:`after` needs, or None."""
        if self.full or not self.selection.wants(seq, kernel):
            return None
        tensors = [
            (i, v, chr(code))
            for i, (v, code) in enumerate(zip(values, codes, strict=False))
            if _capturable(v)
        ]
        size = sum(t.numel() * t.element_size() * 2 for _, t, _ in tensors)
        if self.used + size > self.budget:
            self.full = True
            warnings.warn(
                f"tritontui: captured values reached their budget ({self.budget} bytes); "
                "later launches are not captured",
                RuntimeWarning,
                stacklevel=2,
            )
            return None
        self.used += size
        with _active.inside_launch():
            pre = {f"{i}.pre": _copy(t) for i, t, code in tensors if code in "ix"}
        return (kernel, len(values), tensors, pre)

    def after(self, taken: Any, seq: int, results: list[Any] | None) -> tuple[str, int]:
        """Copies the tensors after launch ``seq`` and queues the file;
        returns its name in the trace (relative to the trace's folder) and
        its size in bytes."""
        kernel, given, tensors, copies = taken
        # An op's new results follow its arguments in the launch record.
        extra = [(given + j, v, "o") for j, v in enumerate(results or []) if _capturable(v)]
        with _active.inside_launch():
            for i, t, code in [*tensors, *extra]:
                if code != "a":
                    copies[f"{i}.post"] = _copy(t)
            event = None
            if any(c.is_pinned() for c in copies.values()):
                event = torch.cuda.Event()
                event.record()
        name = f"{seq}.safetensors"
        self._start_writer()
        self._queue.put((os.path.join(self.folder, name), copies, event, kernel, seq))
        nbytes = sum(c.numel() * c.element_size() for c in copies.values())
        return os.path.basename(self.folder) + "/" + name, nbytes

    def close(self) -> None:
        """Waits until every queued file is written."""
        if self._writer is not None:
            self._queue.put(None)
            self._writer.join()
            self._writer = None

    # -- on the writer thread ---------------------------------------------

    def _start_writer(self) -> None:
        if self._writer is None:
            os.makedirs(self.folder, exist_ok=True)
            self._writer = threading.Thread(
                target=self._write_all, name="tritontui-capture", daemon=True
            )
            self._writer.start()

    def _write_all(self) -> None:
        while (item := self._queue.get()) is not None:
            path, copies, event, kernel, seq = item
            try:
                if event is not None:
                    event.synchronize()
                write_safetensors(path, copies, {"kernel": kernel, "seq": str(seq)})
            except BaseException as e:  # the trace says nothing was captured
                self.error = e


def _capturable(value: Any) -> bool:
    return (
        isinstance(value, torch.Tensor)
        and value.layout == torch.strided
        and value.device.type in ("cpu", "cuda")
        and value.dtype in _DTYPES
    )


def _copy(t: torch.Tensor) -> torch.Tensor:
    """A copy of ``t``'s values now: on the host, contiguous; a CUDA
    tensor's copied on the current stream into pinned memory."""
    if t.device.type == "cuda":
        host = torch.empty(t.shape, dtype=t.dtype, pin_memory=True)
        host.copy_(t.detach(), non_blocking=True)
        return host
    return t.detach().clone(memory_format=torch.contiguous_format)


def write_safetensors(
    path: str, tensors: dict[str, torch.Tensor], metadata: dict[str, str]
) -> None:
    """Writes ``tensors`` as a safetensors file: an 8-byte little-endian
    header length, the JSON header, then each tensor's bytes."""
    header: dict[str, Any] = {"__metadata__": metadata}
    blobs = []
    offset = 0
    for name, t in tensors.items():
        data = _tensors.host_bytes(t)
        header[name] = {
            "dtype": _DTYPES[t.dtype],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    partial = path + ".partial"
    with open(partial, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
    os.replace(partial, path)

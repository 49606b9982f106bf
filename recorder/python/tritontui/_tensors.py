"""How launch arguments become trace arguments: layouts, addresses, and
exact hashes before and after the launch.

CPU tensors are hashed in Rust straight from host memory with the GIL
released. CUDA tensors are hashed on the device, on the launch's own
stream: the kernels are enqueued before and after the launch and the
writer thread collects the results, so the program never waits. No torch
operation is issued either way.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import torch

from . import _native

WRITTEN = 1

# Whether CUDA tensors are hashed on the device: None until first asked.
_GPU: dict[str, bool | None] = {"enabled": None}


def gpu_hashing() -> bool:
    """Hash CUDA tensors on the device (TRITONTUI_GPU_HASH=0 turns it off)."""
    if _GPU["enabled"] is None:
        _GPU["enabled"] = _native.gpu_supported() and os.environ.get("TRITONTUI_GPU_HASH") != "0"
    return bool(_GPU["enabled"])


class Hashes:
    """The hashes of one launch: CPU tensors at once, CUDA tensors as
    tickets of a batch enqueued on ``stream`` (the launch's raw stream, or
    the current stream when None)."""

    __slots__ = ("batch", "capturing", "device", "stream")

    def __init__(self, stream: int | None = None) -> None:
        self.stream = stream
        self.batch: Any = None
        self.device: int | None = None
        self.capturing: bool | None = None

    def hash(self, t: torch.Tensor) -> Any:
        """The tensor's hash, or a ticket for it; None when it cannot be
        read or the launch's device batch is full."""
        if not is_hashable(t) or self._capturing(t):
            return None
        batch = self._batch_for(t)
        if batch is not None:
            try:
                return batch.hash(t.data_ptr(), t.element_size(), list(t.shape), list(t.stride()))
            except RuntimeError as e:
                _gpu_failed(e)
        return hash_tensor(t)

    def stats(self, t: torch.Tensor) -> Any:
        """The summary of a float tensor, or a ticket for it: float32,
        float16 and bfloat16 CUDA tensors are summarised on the device (none
        when the launch's batch is full), anything else on the host."""
        if not is_hashable(t) or not t.is_floating_point() or self._capturing(t):
            return None
        batch = self._batch_for(t)
        if batch is not None:
            try:
                if dtype_name(t) in _DEVICE_STATS:
                    return batch.stats(
                        t.data_ptr(), dtype_name(t), list(t.shape), list(t.stride())
                    )
            except RuntimeError as e:
                _gpu_failed(e)
        return stats_tensor(t)

    def _capturing(self, t: torch.Tensor) -> bool:
        """Whether a CUDA graph is being captured: work enqueued now would
        join it, and a host copy would fail, so nothing is hashed."""
        if t.device.type != "cuda":
            return False
        if self.capturing is None:
            self.capturing = torch.cuda.is_current_stream_capturing()
        return self.capturing

    def _batch_for(self, t: torch.Tensor) -> Any:
        """The device batch a CUDA tensor's work joins, or None when it is
        done on the host (a CPU tensor, no GPU hashing, or another device
        than the batch's)."""
        if t.device.type != "cuda" or not gpu_hashing():
            return None
        try:
            if self.batch is None:
                stream = self.stream
                if stream is None:
                    stream = torch.cuda.current_stream(t.device).cuda_stream
                self.batch = _native.GpuBatch(t.device.index, int(stream))
                self.device = t.device.index
        except RuntimeError as e:
            _gpu_failed(e)
            return None
        return self.batch if t.device.index == self.device else None


# Float dtypes the device summarises, and those the host does (a CUDA
# float64 tensor is copied to the host; fp8 gets no summary).
_DEVICE_STATS = ("float32", "float16", "bfloat16")
_HOST_STATS = (*_DEVICE_STATS, "float64")


def _gpu_failed(error: RuntimeError) -> None:
    _GPU["enabled"] = False
    warnings.warn(
        f"tritontui: hashing CUDA tensors on the host from now on ({error})",
        RuntimeWarning,
        stacklevel=3,
    )


def is_hashable(t: torch.Tensor) -> bool:
    """A dense tensor whose bytes can be read."""
    return (
        t.layout == torch.strided
        and not t.is_quantized
        and t.device.type in ("cpu", "cuda")
        and (type(t) is torch.Tensor or isinstance(t, torch.nn.Parameter))
    )


_DTYPE_NAMES: dict[torch.dtype, str] = {}


def dtype_name(t: torch.Tensor) -> str:
    """``float32`` for ``torch.float32``."""
    name = _DTYPE_NAMES.get(t.dtype)
    if name is None:
        name = _DTYPE_NAMES[t.dtype] = str(t.dtype).rsplit(".", 1)[-1]
    return name


def device_index(t: Any) -> int:
    if isinstance(t, torch.Tensor) and t.device.type == "cuda":
        return t.device.index if t.device.index is not None else torch.cuda.current_device()
    return -1


def _host_view(t: torch.Tensor) -> torch.Tensor:
    """The tensor itself on the CPU; a host copy of a device tensor.

    The copy waits for the device; the GPU path replaces it with hashing on
    the device."""
    if t.device.type == "cpu":
        return t
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes():
        return t.detach().cpu()


def hash_tensor(t: torch.Tensor) -> int | None:
    """``tthash64-v1`` of the tensor's logical bytes, or None if unreadable.
    A CUDA tensor is hashed on the device when it can be (this call waits)."""
    if not is_hashable(t):
        return None
    if t.device.type == "cuda" and gpu_hashing():
        try:
            stream = torch.cuda.current_stream(t.device).cuda_stream
            batch = _native.GpuBatch(t.device.index, stream)
            batch.hash(t.data_ptr(), t.element_size(), list(t.shape), list(t.stride()))
            return batch.wait()[0]
        except RuntimeError:
            pass
    h = _host_view(t)
    return _native.hash_host(h.data_ptr(), h.element_size(), list(h.shape), list(h.stride()))


def stats_tensor(t: torch.Tensor) -> tuple[float, float, float, int, int] | None:
    """Summary statistics computed on the host (a device tensor is copied)."""
    if not is_hashable(t) or dtype_name(t) not in _HOST_STATS:
        return None
    h = _host_view(t)
    return _native.stats_host(
        h.data_ptr(), dtype_name(h), h.element_size(), list(h.shape), list(h.stride())
    )


class Prepared:
    """One argument between the moment before its launch and the moment after."""

    __slots__ = ("layout", "pre", "ptr", "tensor", "value")

    def __init__(self, value: Any) -> None:
        self.value = value
        self.tensor: torch.Tensor | None = None
        self.layout = 0
        self.ptr = 0
        self.pre: Any = None


def prepare(
    session: Any,
    value: Any,
    hashes: Hashes,
    *,
    hash_before: bool | None = None,
    access: str = "in",
) -> Prepared:
    """Describes an argument before the launch. A pure output's old bytes
    do not matter (the launch overwrites them), so they are not hashed."""
    p = Prepared(value)
    if isinstance(value, torch.Tensor):
        p.tensor = value
        p.layout = session.layout_id(
            dtype_name(value),
            value.element_size(),
            tuple(value.shape),
            tuple(value.stride()),
            value.storage_offset(),
        )
        p.ptr = value.data_ptr()
        wanted = session.hash_inputs if hash_before is None else hash_before
        if wanted and access != "out":
            p.pre = hashes.hash(value)
    return p


def finish(session: Any, p: Prepared, declared_written: bool, hashes: Hashes) -> Any:
    """The trace argument after the launch: a tensor tuple or the value.
    The writer thread also flags as written an argument whose hash changed."""
    t = p.tensor
    if t is None:
        return scalar(p.value)
    post = hashes.hash(t) if session.hash_outputs else None
    flags = WRITTEN if declared_written else 0
    if session.stats:
        return (p.layout, p.ptr, flags, p.pre, post, hashes.stats(t))
    return (p.layout, p.ptr, flags, p.pre, post)


def encode(session: Any, value: Any, hashes: Hashes) -> Any:
    """A one-shot description (graph inputs): its hash now, as ``pre``."""
    p = prepare(session, value, hashes, hash_before=session.hash_inputs or session.hash_outputs)
    if p.tensor is None:
        return scalar(value)
    return (p.layout, p.ptr, 0, p.pre, None)


MAX_REPR = 120


def scalar(value: Any) -> Any:
    """A value the trace can hold as a scalar; long reprs become the type name."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    text = (
        str(value)
        if isinstance(value, torch.SymInt | torch.SymFloat | torch.SymBool)
        else repr(value)
    )
    return text if len(text) <= MAX_REPR else f"<{type(value).__name__}>"

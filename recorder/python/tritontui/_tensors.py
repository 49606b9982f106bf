"""Tensors outside the hot path: the public ``hash_tensor``, host copies
for the native describer, and the access codes it takes.

Launch arguments themselves are read, interned and hashed by the native
describer (``_native.TraceFile.describe``): CPU tensors straight from host
memory, CUDA tensors on the device on the launch's own stream, collected
by the writer thread, so the program never waits. This module also makes
the probe tensors from which the describer learns torch's tensor layout.
"""

from __future__ import annotations

import contextlib
import ctypes
import warnings

import torch

from . import _environment, _native

# Whether CUDA tensors are hashed on the device: None until first asked.
_GPU: dict[str, bool | None] = {"enabled": None}


def gpu_hashing() -> bool:
    """Hash CUDA tensors on the device (TRITONTUI_GPU_HASH=0 turns it off)."""
    if _GPU["enabled"] is None:
        _GPU["enabled"] = _native.gpu_supported() and not _environment.gpu_hashing_off()
    return bool(_GPU["enabled"])


def gpu_failed(error: object) -> None:
    """Hashes CUDA tensors on the host from now on, saying why once."""
    if not _GPU["enabled"]:
        return
    _GPU["enabled"] = False
    warnings.warn(
        f"tritontui: hashing CUDA tensors on the host from now on ({error})",
        RuntimeWarning,
        stacklevel=3,
    )


# The access codes the native describer takes.
ACCESS_CODES = {"in": "i", "out": "o", "inout": "x", "allocated": "a"}


def access_codes(access: list[str]) -> bytes:
    """``b"iox"`` for ``["in", "out", "inout"]``."""
    return "".join(ACCESS_CODES[a] for a in access).encode()


def with_storage(t: torch.Tensor) -> torch.Tensor | None:
    """The tensor whose storage holds ``t``'s elements: ``t`` itself, or
    what a functorch wrapper (a batched or grad-tracking tensor, which has
    no storage of its own) wraps, through every level; None for a tensor
    with no storage to reach (meta, fake, nested)."""
    functorch = torch._C._functorch
    while not torch._C._has_storage(t):
        if not functorch.is_functorch_wrapped_tensor(t):
            return None
        t = functorch.get_unwrapped(t)
    return None if t.is_nested else t


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


def host_bytes(t: torch.Tensor) -> bytes:
    """The bytes of CPU tensor ``t``'s elements in row-major order, read
    without numpy (torch does not need it, so a program may lack it)."""
    flat = t.contiguous().reshape(-1).view(torch.uint8)
    if flat.numel() == 0:
        return b""
    return ctypes.string_at(flat.data_ptr(), flat.numel())


def _host_view(t: torch.Tensor) -> torch.Tensor:
    """The tensor itself on the CPU; a host copy of a device tensor (the
    native describer's fallback when the device cannot hash; it waits)."""
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


# Float dtypes the host summarises (fp8 gets no summary).
_HOST_STATS = ("float32", "float16", "bfloat16", "float64")


def stats_tensor(t: torch.Tensor) -> tuple[float, float, float, int, int] | None:
    """Summary statistics computed on the host (a device tensor is copied)."""
    if not is_hashable(t) or dtype_name(t) not in _HOST_STATS:
        return None
    h = _host_view(t)
    return _native.stats_host(
        h.data_ptr(), dtype_name(h), h.element_size(), list(h.shape), list(h.stride())
    )


def impl_probes() -> list[torch.Tensor]:
    """Tensors of known metadata from which the native describer finds
    where torch keeps each field (see ``recorder/src/python/tensor_impl.rs``): a
    3-d float64 view at storage offset 12347, a 7-d view, a parameter, and
    two tensors of every dtype torch can allocate on the host."""
    base = torch.empty(20000, dtype=torch.float64)
    probes = [
        base.as_strided((3, 5, 7), (97, 13, 2), 12347),
        base.as_strided((2, 3, 2, 3, 2, 3, 2), (1, 2, 6, 12, 36, 72, 216), 999),
        torch.nn.Parameter(torch.zeros(4, 3)),
        torch.zeros(()),
        torch.zeros(5, 5).t(),
    ]
    dtypes = sorted({v for v in vars(torch).values() if isinstance(v, torch.dtype)}, key=str)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "ComplexHalf support is experimental"
        for dtype in dtypes:
            # Quantized and some other dtypes have no plain host tensors.
            with contextlib.suppress(RuntimeError, TypeError):
                probes += [torch.empty(3, dtype=dtype), torch.empty(2, 7, dtype=dtype)[1:]]
    return probes

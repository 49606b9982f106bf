"""What determines a run's numerics besides its code and inputs, recorded
in the trace's header (``settings``) so that ``tritontui diff`` can show
what differs between two runs' settings first: torch's numerics flags,
Inductor's and Dynamo's config values that differ from their defaults,
the environment variables that change kernels, and the CUDA driver,
read when recording starts.

The flags a program can switch while it runs and that change results
silently (TF32, reduced-precision reductions, cuDNN, deterministic
algorithms, the BLAS library, the attention backends, threads,
``CUBLAS_WORKSPACE_CONFIG``) are sampled again where they act
(:class:`Numerics`): at every compiled graph's call and before every op
they change, with a ``settings`` record whenever they changed."""

from __future__ import annotations

import sys
from typing import Any

from . import _environment, _native

# Environment variables that change what runs or how: their prefixes.
ENV_PREFIXES = (
    "TORCHINDUCTOR_",
    "TORCHDYNAMO_",
    "TORCH_CUDNN_",
    "NCCL_",
    "CUBLAS_",
    "CUBLASLT_",
    "CUDNN_",
)
ENV_NAMES = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_VISIBLE_DEVICES",
    "PYTORCH_CUDA_ALLOC_CONF",
    "NVIDIA_TF32_OVERRIDE",
    "PYTHONHASHSEED",
)
# Where files go, not what they hold: differs from run to run harmlessly.
ENV_IGNORED_SUFFIXES = ("_CACHE_DIR", "_DEBUG_DIR", "_TRACE_DIR")


def settings(numerics: Numerics) -> dict[str, str]:
    """Each setting's name and value, as text: the numerics flags as
    ``numerics`` last sampled them, the CUDA driver, the config values off
    their defaults and the environment variables that change kernels."""
    out = numerics.as_text()
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            driver = _driver(torch)
        except Exception:  # no driver to ask: not recorded
            driver = None
        if driver is not None:
            out["cuda.driver"] = driver
        out.update(non_defaults("inductor", "torch._inductor.config"))
        out.update(non_defaults("dynamo", "torch._dynamo.config"))
    for name, value in _environment.variables().items():
        if (name.startswith(ENV_PREFIXES) or name in ENV_NAMES) and not name.endswith(
            ENV_IGNORED_SUFFIXES
        ):
            out[f"env.{name}"] = value
    return out


# How a numerics flag is read: a torch getter's result ("call"), the first
# item of it ("first"), or an environment variable ("env").
Getter = tuple[str, Any]


def _numerics_getters(torch: Any) -> list[tuple[str, Getter]]:
    """The result-changing flags a program can switch while it runs, by
    their header names, each with how to read it: torch's own cheap
    getter (a call into ``at::globalContext()``, 0.05 to 0.3 µs) or the
    process environment."""
    c = torch._C
    getters: list[tuple[str, Getter]] = [
        ("torch.num_threads", ("call", torch.get_num_threads)),
        ("torch.float32_matmul_precision", ("call", c._get_float32_matmul_precision)),
        ("torch.deterministic_algorithms", ("call", c._get_deterministic_algorithms)),
        (
            "torch.deterministic_algorithms_warn_only",
            ("call", c._get_deterministic_algorithms_warn_only),
        ),
        ("torch.backends.cuda.matmul.allow_tf32", ("call", c._get_cublas_allow_tf32)),
        (
            "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
            ("first", c._get_cublas_allow_fp16_reduced_precision_reduction),
        ),
        (
            "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
            ("first", c._get_cublas_allow_bf16_reduced_precision_reduction),
        ),
        (
            "torch.backends.cuda.matmul.allow_fp16_accumulation",
            ("call", c._get_cublas_allow_fp16_accumulation),
        ),
        ("torch.backends.cuda.preferred_blas_library", ("call", c._get_blas_preferred_backend)),
        ("torch.backends.cuda.flash_sdp_enabled", ("call", c._get_flash_sdp_enabled)),
        (
            "torch.backends.cuda.mem_efficient_sdp_enabled",
            ("call", c._get_mem_efficient_sdp_enabled),
        ),
        ("torch.backends.cuda.math_sdp_enabled", ("call", c._get_math_sdp_enabled)),
        ("torch.backends.cuda.cudnn_sdp_enabled", ("call", c._get_cudnn_sdp_enabled)),
        ("torch.backends.cudnn.enabled", ("call", c._get_cudnn_enabled)),
        ("torch.backends.cudnn.allow_tf32", ("call", c._get_cudnn_allow_tf32)),
        ("torch.backends.cudnn.deterministic", ("call", c._get_cudnn_deterministic)),
        ("torch.backends.cudnn.benchmark", ("call", c._get_cudnn_benchmark)),
        ("env.CUBLAS_WORKSPACE_CONFIG", ("env", "CUBLAS_WORKSPACE_CONFIG")),
    ]
    return [(name, getter) for name, getter in getters if _readable(getter)]


def _readable(getter: Getter) -> bool:
    """Whether this torch has the getter (an older one lacks some)."""
    kind, what = getter
    if kind == "env":
        return True
    try:
        value = what()
        if kind == "first":
            value[0]
    except Exception:
        return False
    return True


class Numerics:
    """The result-changing flags as they are now: sampled where they act
    (natively: ``_native.NumericsSampler``), told to the trace only when
    they changed since the last sample."""

    def __init__(self) -> None:
        torch = sys.modules["torch"]
        named = _numerics_getters(torch)
        self._names = [name for name, _ in named]
        self._sampler = _native.NumericsSampler([getter for _, getter in named])

    def changed(self) -> dict[str, str] | None:
        """Every sampled flag by name, as text (unset ones left out), when
        any changed since the last call (or since recording started);
        else None."""
        now = self._sampler.changed()
        return None if now is None else self._text(now)

    def as_text(self) -> dict[str, str]:
        """Every sampled flag by name, as the header records it."""
        return self._text(self._sampler.last())

    def _text(self, values: tuple[Any, ...]) -> dict[str, str]:
        return {
            name: str(value)
            for name, value in zip(self._names, values, strict=True)
            if value is not None
        }


def _driver(torch: Any) -> str | None:
    """The CUDA driver's version (``12080`` is 12.8), when CUDA is up."""
    if not torch.cuda.is_available():
        return None
    import ctypes

    version = ctypes.c_int()
    libcuda = ctypes.CDLL("libcuda.so.1")
    if libcuda.cuDriverGetVersion(ctypes.byref(version)) != 0:
        return None
    return f"{version.value // 1000}.{version.value % 1000 // 10}"


def non_defaults(prefix: str, module_name: str) -> dict[str, str]:
    """A config module's entries set to other values than their defaults
    (the module as the program imported it; none when it did not): set,
    since defaults drawn from the environment are not the program's
    choice (the variables are recorded), and other, since Inductor sets
    some entries to their defaults while it compiles."""
    config = sys.modules.get(module_name)
    entries = getattr(config, "_config", None)
    if not isinstance(entries, dict):
        return {}
    out = {}
    for name, entry in entries.items():
        try:
            value = getattr(config, name)
            if not config._is_default(name) and value != entry.default:
                out[f"{prefix}.{name}"] = repr(value)
        except Exception:  # an entry torch cannot read back
            continue
    return out

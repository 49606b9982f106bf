"""Inductor's autotuning of its Triton kernels, recorded as ``compile``
records: each benchmark of a kernel's configs (every config tried, its
time, the one chosen), each coordinate-descent search (where it started,
what it chose), and what Inductor's autotune cache answered when the
kernel was loaded (a hit hands over the config chosen by an earlier
process, and nothing is benchmarked). Two runs that launch one kernel
with different configs can then be told why: noise between close
timings, or a config from a cache that one run had and the other lacked.

The methods are wrapped while recording and look the active session up
when called; they return what the originals return."""

from __future__ import annotations

import functools
from typing import Any

from .. import _active
from .triton import config_items, kernel_name

# (owner, attribute, original) of each method wrapped.
_WRAPPED: list[tuple[Any, str, Any]] = []


def config_text(config: Any) -> str:
    """A Triton config as ``XBLOCK=64 R0_BLOCK=8 num_warps=2 num_stages=1``:
    the items of the trace's kernel ``config``."""
    return " ".join(f"{k}={v}" for k, v in config_items(config).items())


def _record(event: str, autotuner: Any, name: Any, info: Any) -> None:
    """Writes a ``compile`` record of ``event`` into the active session, its
    name and info computed by ``name()`` and ``info()`` (None: nothing to
    record); an error in them or in writing stops the recording, and the
    autotuning goes on."""
    session = _active.active()
    if session is None:
        return
    try:
        details = info()
        if details is None:
            return
        compile_id = getattr(autotuner, "compile_id", None)
        if compile_id is not None:
            details["compile_id"] = str(compile_id)
        session.file.compile(event, name(), details)
    except Exception as e:
        session.fail(e)


def _benchmarked(original: Any) -> Any:
    @functools.wraps(original)
    def benchmark_all_configs(self: Any, *args: Any, **kwargs: Any) -> Any:
        timings = original(self, *args, **kwargs)

        def info() -> dict[str, Any]:
            tried = {
                "method": "benchmark",
                "configs": len(timings),
                "tried": "; ".join(
                    f"{config_text(launcher.config)}: {float(ms):.4g} ms"
                    for launcher, ms in timings.items()
                ),
            }
            if not timings:
                return tried
            # The one Inductor keeps: the first of the fastest.
            chosen = min(timings, key=timings.get)
            return {
                **tried,
                "chosen": config_text(chosen.config),
                "chosen_ms": float(timings[chosen]),
            }

        _record("autotune", self, lambda: kernel_name(self), info)
        return timings

    return benchmark_all_configs


def _searched(original: Any) -> Any:
    @functools.wraps(original)
    def coordinate_descent_tuning(self: Any, launcher: Any, *args: Any, **kwargs: Any) -> Any:
        found = original(self, launcher, *args, **kwargs)
        # Recorded also where it keeps the config it started from.
        _record(
            "autotune",
            self,
            lambda: kernel_name(self),
            lambda: {
                "method": "coordinate_descent",
                "start": config_text(launcher.config),
                "chosen": config_text(found.config),
            },
        )
        return found

    return coordinate_descent_tuning


def _cache_checked(original: Any) -> Any:
    @functools.wraps(original)
    def check_autotune_cache(configs: Any, filename: Any, inductor_meta: Any) -> Any:
        answer = original(configs, filename, inductor_meta)

        def info() -> dict[str, Any] | None:
            chosen, _, said = answer
            state = (said or {}).get("autotune_cache_state")
            if state is None:
                return None
            found = {"state": str(state), "configs": len(configs)}
            return {**found, "chosen": config_text(chosen[0])} if len(chosen) == 1 else found

        _record(
            "autotune_cache",
            None,
            lambda: str((inductor_meta or {}).get("kernel_name", "")),
            info,
        )
        return answer

    return check_autotune_cache


def install() -> None:
    if _WRAPPED:
        return
    try:
        from torch._inductor.runtime import triton_heuristics as heuristics
    except ImportError:
        return  # torch without Triton: nothing is autotuned
    for owner, name, wrap in (
        (heuristics.CachingAutotuner, "benchmark_all_configs", _benchmarked),
        (heuristics.CachingAutotuner, "coordinate_descent_tuning", _searched),
        (heuristics, "check_autotune_cache", _cache_checked),
    ):
        original = getattr(owner, name)
        _WRAPPED.append((owner, name, original))
        setattr(owner, name, wrap(original))


def uninstall() -> None:
    while _WRAPPED:
        owner, name, original = _WRAPPED.pop()
        setattr(owner, name, original)

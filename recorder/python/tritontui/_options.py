"""A recording's options: each from ``start()``'s keyword, else its
``TRITONTUI_*`` variable, else its default, as the trace crate's one
table defines them (``_native.recording_options``: names, variables,
defaults, checks), which ``tritontui record`` reads too. This is the one
module that resolves them (from the environment ``_environment`` gives)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import _environment, _native


@dataclass(frozen=True)
class Options:
    """The options of one recording, resolved and checked."""

    # What argument values are hashed: both (before and after each
    # launch), inputs (before), outputs (after) or none.
    hash: str
    # Whether aten ops are recorded beside the compiled kernels.
    aten: bool
    # A glob of the kernel names recorded.
    kernels: str
    # Whether floating tensors' summary statistics are recorded too.
    stats: bool
    # Whether written floating tensors' samples (and statistics) are
    # recorded, for comparing two programs' numerics.
    samples: bool
    # Whether each tensor's rows (indices of its leading dimension) are
    # hashed each on its own after every launch.
    rows: bool
    # Pause points (launch numbers and kernel-name globs), or None.
    break_at: str | None
    # Launches captured by value, or None.
    capture: str | None
    # The most bytes of captured values, or None for the default.
    capture_budget: int | None
    # The program's own hash function (a callable or a DebugMode name), or
    # None.
    hash_fn: Any
    # Whether CUDA graphs stay on and are recorded as they replay.
    cuda_graphs: bool
    # Whether only fingerprints are recorded (graph calls' outputs, host
    # reads, collectives, the state at each step's end).
    fingerprint: bool
    # The first step recorded in full (fingerprints before it), or None.
    from_step: int | None
    # The last step recorded (recording stops as it ends), or None.
    to_step: int | None

    @property
    def windowed(self) -> bool:
        """Only some steps are recorded in full (``from_step`` or
        ``to_step``)."""
        return self.from_step is not None or self.to_step is not None

    @property
    def hash_inputs(self) -> bool:
        """Arguments are hashed before each launch."""
        return self.hash in ("both", "inputs")

    @property
    def hash_outputs(self) -> bool:
        """Arguments are hashed after each launch."""
        return self.hash in ("both", "outputs")


def resolve(given: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> Options:
    """The options ``given`` as keywords (None: not given), the rest from
    ``environ`` (the process's environment by default) or their
    defaults. Raises ValueError naming an option that takes no such
    value."""
    environ = _environment.variables() if environ is None else environ
    table = _native.recording_options()
    unknown = set(given) - {name for name, *_ in table}
    if unknown:
        raise TypeError(f"no recording option {', '.join(sorted(unknown))}")
    values: dict[str, Any] = {}
    for name, env, default, kind in table:
        value = given.get(name)
        if value is None:
            text = environ.get(env) or default
            value = None if text is None else _from_text(name, kind, text)
        elif isinstance(value, str):
            _check(name, value)
        elif kind == "count" and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise ValueError(f"{name} is {value!r}; it takes a step number (0 or more)")
        values[name] = value
    options = Options(**values)
    window = (options.from_step, options.to_step)
    if None not in window and window[1] < window[0]:
        raise ValueError(
            f"to_step ({options.to_step}) comes before from_step ({options.from_step})"
        )
    return options


def _from_text(name: str, kind: str, text: str) -> Any:
    """An option's value from its text in the environment."""
    _check(name, text)
    if kind == "flag":
        return _native.parse_flag(text)
    if kind in ("bytes", "count"):
        return int(text)
    return text


def _check(name: str, text: str) -> None:
    error = _native.option_error(name, text)
    if error is not None:
        raise ValueError(error)

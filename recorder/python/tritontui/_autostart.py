"""Starts recording at interpreter start when ``TRITONTUI_RECORD`` is set
(imported by ``tritontui_autorecord.pth``). Options come from their
``TRITONTUI_*`` variables (``_options``). In an Inductor compile worker,
``TRITONTUI_BREAK``'s kernel globs pause it before compiling a matching
kernel.

Recording begins when the program imports torch, and the variable is
removed from the environment so Inductor's compile workers and other
children do not record into the same file.

torchrun's launcher (``torchrun``, ``python -m torch.distributed.run``)
runs no kernels: it records nothing and leaves the variable to the ranks
it starts, each of which records into its own trace (``{rank}`` in the
path, else ``-rank{rank}`` added; see ``_session.expand_path``). Ranks
that ``torch.multiprocessing.spawn`` starts get ``TRITONTUI_SPAWNED_RANKS``
from their launcher instead (see ``_spawned_ranks``)."""

from __future__ import annotations

import importlib.abc
import itertools
import os
import sys
import warnings

from . import _environment

# The modules that run torchrun's launcher.
_LAUNCHERS = ("torch.distributed.run", "torch.distributed.launch")


def _is_launcher() -> bool:
    """Whether this process is torchrun's launcher, which starts the ranks."""
    if os.path.basename(sys.argv[0]) == "torchrun":
        return True
    argv = getattr(sys, "orig_argv", sys.argv)
    return any(a == "-m" and b in _LAUNCHERS for a, b in itertools.pairwise(argv))


if _environment.get(_environment.RECORD) and _is_launcher():
    _PATH = ""
    print(
        f"tritontui: torchrun's ranks record into {_environment.get(_environment.RECORD)} "
        "(one trace per rank; the launcher itself is not recorded)",
        file=sys.stderr,
    )
else:
    _PATH = _environment.take(_environment.RECORD)


def _start() -> None:
    from ._recording import start

    try:
        # Every option from its TRITONTUI_* variable (tritontui._options).
        start(_PATH)
    except Exception as e:
        warnings.warn(
            f"tritontui: could not start recording to {_PATH}: {e}", RuntimeWarning, stacklevel=1
        )
        return


class _AfterTorch(importlib.abc.MetaPathFinder):
    """Runs ``then`` right after ``import torch`` completes."""

    def __init__(self, then) -> None:
        self.then = then

    def find_spec(self, name, path, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = None
        for finder in sys.meta_path:
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                break
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_then(module):
            exec_module(module)
            self.then()

        loader.exec_module = exec_then
        return spec


def _worker_pause() -> None:
    from . import _pause

    try:
        _pause.install_in_compile_worker()
    except Exception as e:
        warnings.warn(
            f"tritontui: no pause points in this worker: {e}", RuntimeWarning, stacklevel=1
        )


def _after_torch(then) -> None:
    if "torch" in sys.modules:
        then()
    else:
        sys.meta_path.insert(0, _AfterTorch(then))


if _PATH:
    _after_torch(_start)
elif _environment.get(_environment.SPAWNED_RANKS):
    from . import _spawned_ranks

    _HANDED = _spawned_ranks.take_handover()
    if _HANDED:
        _after_torch(lambda: _spawned_ranks.await_rank(_HANDED))
elif _environment.get(_environment.BREAK) and any("compile_worker" in a for a in sys.argv):
    _after_torch(_worker_pause)

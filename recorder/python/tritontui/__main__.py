"""The ``tritontui`` command (``python -m tritontui``, and the console
script a ``pip install`` puts on PATH): the app's command line, linked
into the extension, so one install gives the recorder and the tool."""

from __future__ import annotations

import signal
import sys


def main() -> int:
    """Runs ``tritontui`` with this process's arguments; its exit status."""
    # Ctrl-C stops the command as it stops the binary, instead of waiting
    # for Python to look at its flag when the native call returns.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    from ._native import run_command

    return run_command(["tritontui", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())

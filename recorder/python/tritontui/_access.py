"""Whether a kernel reads an output's old contents, decided from what its
generated source does rather than from the argument's name.

An output the source reads before it writes it (an accumulator, a C++
``out_ptr`` updated in place, an atomic add into memory zeroed elsewhere)
is read and written (``inout``): its bytes before the launch are hashed
and compared as an input. One the source writes first (a reused scratch
buffer, even when Inductor names it ``in_out_ptr``) is written only
(``out``): its old bytes never matter. A use the scanner does not know as
a write (a helper such as ``transpose_mxn`` storing through the pointer)
counts as a read: the cost is one more hash, never a missed input."""

from __future__ import annotations

import re


def _first_use(body: str, name: str, write: re.Pattern[str]) -> str | None:
    """``read`` or ``write``: what the first use of ``name`` in ``body`` does."""
    uses = list(re.finditer(rf"\b{re.escape(name)}\b", body))
    if not uses:
        return None
    writes = {m.start() for m in write.finditer(body)}
    return "write" if uses[0].start() in writes else "read"


def _cpp_writes(name: str) -> re.Pattern[str]:
    # `x.store(out_ptr0 + i)` and `out_ptr0[i] = v` (not `==`, not `+=`).
    n = re.escape(name)
    return re.compile(rf"(?<=\.store\()\s*(?={n}\b)|\b(?={n}\s*\[[^\]]*\]\s*=(?!=))")


def _triton_writes(name: str) -> re.Pattern[str]:
    # `tl.store(out_ptr0 + offsets, v)`.
    return re.compile(rf"(?<=tl\.store\()\s*(?={re.escape(name)}\b)")


def cpp_output_access(body: str, name: str) -> str:
    """``inout`` if the C++ kernel ``body`` reads pointer ``name`` before
    writing it, else ``out``."""
    return "inout" if _first_use(body, name, _cpp_writes(name)) == "read" else "out"


def _triton_body(source: str) -> str:
    """What follows a Triton function's ``def name(...):`` header, where
    every parameter is named and none is used; ``source`` itself when it
    has no header (a body alone)."""
    header = re.search(r"^[ \t]*def\s+\w+\s*\(", source, re.MULTILINE)
    if header is None:
        return source
    depth = 0
    for at in range(header.end() - 1, len(source)):
        if source[at] == "(":
            depth += 1
        elif source[at] == ")":
            depth -= 1
            if depth == 0:
                colon = source.find(":", at)
                return source[colon + 1 :] if colon >= 0 else source
    return source


def triton_output_access(source: str, name: str) -> str:
    """``inout`` if the Triton kernel ``source`` (the whole function, or
    its body) reads ``name`` before storing to it, else ``out``."""
    body = _triton_body(source)
    return "inout" if _first_use(body, name, _triton_writes(name)) == "read" else "out"

"""The shape of the tree, held by tests (issue 56): no module imports one
that imports it back, in Rust or in Python (an import inside a function
counts), and no source file outside tests grows past 1,000 lines."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT

CRATES = ["trace/src", "engine/src", "app/src", "recorder/src", "synth/src"]
PACKAGE = ROOT / "recorder" / "python" / "tritontui"
MOST_LINES = 1000


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every module that reaches itself again, with the way round."""
    found = []
    for start in sorted(graph):
        stack = [(start, [start])]
        seen: set[str] = set()
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    found.append(path)
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
    return found


def _rust_modules(root: Path) -> dict[str, Path]:
    modules = {}
    for path in root.rglob("*.rs"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] in ("mod", "lib", "main"):
            parts = parts[:-1]
        modules["::".join(parts)] = path
    return modules


def _reexports(root: Path) -> dict[str, str]:
    """The names the crate root re-exports (``pub use module::{A, B}``),
    each with the module it comes from: ``crate::A`` names that module."""
    lib = root / "lib.rs"
    found = {}
    if lib.exists():
        for module, names in re.findall(r"pub use (\w+)::\{?([^;}]*)\}?;", lib.read_text()):
            for name in re.findall(r"\w+", names):
                found[name] = module
    return found


def _rust_imports(
    module: str, source: str, modules: dict[str, Path], reexports: dict[str, str]
) -> set[str]:
    """The modules of its crate that ``module`` names (``crate::``,
    ``super::`` and ``self::`` paths outside comments and unit tests, and
    names the crate root re-exports), other than its own ancestors and
    descendants."""
    source = re.sub(r"#\[cfg\(test\)\]\s*mod tests \{.*", "", source, flags=re.S)
    source = re.sub(r"//[^\n]*", "", source)
    here = module.split("::") if module else []
    named = set()
    for found in re.findall(r"\b((?:crate|super|self)(?:::\w+)+)", source):
        parts = found.split("::")
        if parts[0] == "crate" and parts[1] in reexports:
            parts = ["crate", reexports[parts[1]], *parts[1:]]
        if parts[0] == "crate":
            base = []
        elif parts[0] == "self":
            base = here
        else:
            base = here[:-1]
            while len(parts) > 1 and parts[1] == "super":
                base, parts = base[:-1], parts[1:]
        longest = None
        for k in range(1, len(parts)):
            candidate = "::".join(base + parts[1 : k + 1])
            if candidate in modules:
                longest = candidate
        if longest and not (
            longest == module
            or module.startswith(longest + "::")
            or longest.startswith(module + "::")
        ):
            named.add(longest)
    return named


def test_no_rust_module_imports_one_that_imports_it_back() -> None:
    for crate in CRATES:
        modules = _rust_modules(ROOT / crate)
        reexports = _reexports(ROOT / crate)
        graph = {m: _rust_imports(m, p.read_text(), modules, reexports) for m, p in modules.items()}
        assert _cycles(graph) == [], crate


def _python_modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _python_imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules ``module`` imports, wherever the import
    stands (an import inside a function to dodge a cycle is the cycle)."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    named = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package[: len(package) - node.level + 1]
            base = base + (node.module.split(".") if node.module else [])
        elif (node.module or "").split(".")[0] == "tritontui":
            base = node.module.split(".")
        else:
            continue
        target = ".".join(base)
        for alias in node.names:
            named.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target)
    return {m for m in named if m in modules and m != module}


def test_no_python_module_imports_one_that_imports_it_back() -> None:
    modules = _python_modules()
    graph = {m: _python_imports(m, p, modules) for m, p in modules.items()}
    # The package imports its submodules, and they import its own extension
    # module (`from . import _native`): the package is no link of a cycle.
    graph = {m: {n for n in names if n != "tritontui"} for m, names in graph.items()}
    assert _cycles(graph) == []


def test_no_source_file_outside_tests_is_over_a_thousand_lines() -> None:
    sources = [p for crate in CRATES for p in (ROOT / crate).rglob("*.rs")]
    sources += list(PACKAGE.rglob("*.py"))
    sources += list((ROOT / "scripts").glob("*.py"))
    long = {
        str(p.relative_to(ROOT)): n
        for p in sources
        if (n := len(p.read_text().splitlines())) > MOST_LINES
    }
    assert long == {}

"""Inductor's extern kernels recorded, where aten ops are recorded by the
dispatch mode (``TRITONTUI_ATEN_OBSERVER=0``), by native proxies without
the mode: the same trace as through the mode, and as the native
observer's, which sees their ops as it sees any."""

from __future__ import annotations

from pathlib import Path

import torch
from conftest import diff, dump
from tritontui.hooks.extern_kernels import overload


def test_extern_kernels_are_recorded_by_proxies_as_the_mode_records_them(
    run_program, tmp_path: Path
) -> None:
    by_the_mode = {"TRITONTUI_ATEN_OBSERVER": "0"}
    proxied = run_program("extern_kernels.py", "proxied.msgpack", env=by_the_mode).stdout.split()
    moded = run_program(
        "extern_kernels.py", "mode.msgpack", env={**by_the_mode, "TRITONTUI_EXTERN_HOOK": "0"}
    ).stdout.split()
    observed = run_program("extern_kernels.py", "observed.msgpack").stdout.split()
    # The proxy stands in while recording only, and recorded the mm's of
    # both steps (one forward, two backward per step).
    assert proxied == ["ExternHook", "6", "builtin_function_or_method"], proxied
    assert moded == ["builtin_function_or_method", "-", "builtin_function_or_method"], moded
    # The observer needs no proxy.
    assert observed == moded, observed

    def launches(name: str) -> list[tuple]:
        return [
            (r["kernel"], [(a["name"], a.get("pre"), a.get("post")) for a in r["args"]])
            for r in dump(tmp_path / name)
            if r["type"] == "launch"
        ]

    by_proxy, by_mode = launches("proxied.msgpack"), launches("mode.msgpack")
    assert by_proxy == by_mode
    assert launches("observed.msgpack") == by_mode
    kernels = [kernel for kernel, _ in by_proxy]
    assert kernels.count("aten::mm.out") >= 4 and "aten::addmm.out" in kernels, kernels
    code, report = diff(tmp_path / "proxied.msgpack", tmp_path / "mode.msgpack")
    assert code == 0 and report["verdict"] == "identical", report


def test_a_call_selects_the_overload_its_arguments_bind_to() -> None:
    aten = torch.ops.aten

    def selected(*call: object) -> object:
        found = overload(*call)
        return found and found[0]

    assert selected(torch.mm, 2, ["out"]) is aten.mm.out
    assert selected(torch.mm, 2, []) is aten.mm.default
    assert selected(torch.addmm, 3, ["alpha", "beta", "out"]) is aten.addmm.out
    assert selected(torch.mm, 2, ["out_dtype"]) is aten.mm.dtype
    assert selected(torch.convolution, 9, []) is aten.convolution.default
    assert selected(aten.mm.out, 2, ["out"]) is aten.mm.out
    # No overload takes these: the original runs through the mode.
    assert selected(torch.mm, 2, ["bogus"]) is None
    # The schema's arguments, with their defaults (addmm's beta is 1).
    _, params = overload(torch.addmm, 3, ["out"])
    assert ("beta", True, True, 1) in params and ("self", False, False, None) in params

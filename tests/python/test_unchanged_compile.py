"""Recording never changes what torch compiles: every program below runs
twice, unrecorded and recorded, each with the compile probe
(``compile_probe/sitecustomize.py``), and Dynamo must compile the same
frames into the same graphs, with the same graph breaks, recompilations
and guards, in both. The recorded run must also record to the end, with
no internal error: a recording that stops early, or that makes Dynamo
trace into the recorder, has recorded another program than the user's."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest
from conftest import (
    COMPILE_PROBE,
    PROGRAMS,
    ROOT,
    TORCHRUN,
    dump,
    launches,
    run_ok,
    with_compile_probe,
)

CORPUS = ROOT / "tests" / "corpus" / "programs"
# What the recorder must never make a program print.
RECORDER_FAILED = (
    "recording stopped after an internal error",
    "does not know how to trace the builtin `tritontui",
)


def _events(path: Path) -> dict:
    return json.loads(path.read_text())


def _first_difference(plain: dict, recorded: dict) -> str:
    """Where two runs' compile events first differ, in words."""
    if plain["counters"] != recorded["counters"]:
        return f"counters: {plain['counters']} unrecorded, {recorded['counters']} recorded"
    for i, (a, b) in enumerate(zip(plain["events"], recorded["events"], strict=False)):
        for key in sorted(a.keys() | b.keys()):
            if a.get(key) != b.get(key):
                lines = zip(
                    str(a.get(key)).splitlines(), str(b.get(key)).splitlines(), strict=False
                )
                first = next(((x, y) for x, y in lines if x != y), (a.get(key), b.get(key)))
                return f"event {i}, {key}: {first[0]!r}\n  recorded: {first[1]!r}"
    return f"{len(plain['events'])} events unrecorded, {len(recorded['events'])} recorded"


def compiles_as_unrecorded(
    tmp_path: Path,
    command: list[str],
    unrecorded: dict[str, str],
    recorded: dict[str, str],
    ranks: list[str],
) -> None:
    """Runs ``command`` in environment ``unrecorded``, then in ``recorded``,
    and checks that each of ``ranks`` compiled the same in both and that
    the recorder said no internal error."""
    run_ok(
        command,
        tmp_path,
        with_compile_probe(unrecorded, tmp_path / "plain-{rank}.json"),
    )
    recorded = with_compile_probe(recorded, tmp_path / "recorded-{rank}.json")
    said = run_ok(command, tmp_path, recorded)
    for failure in RECORDER_FAILED:
        assert failure not in said.stderr, said.stderr[-3000:]
    for rank in ranks:
        plain = _events(tmp_path / f"plain-{rank}.json")
        again = _events(tmp_path / f"recorded-{rank}.json")
        assert plain == again, f"rank {rank}: " + _first_difference(plain, again)


def test_the_probe_hides_only_what_differs_between_any_two_processes():
    probe = importlib.util.spec_from_file_location(
        "compile_probe", COMPILE_PROBE / "sitecustomize.py"
    )
    witness = importlib.util.module_from_spec(probe)
    probe.loader.exec_module(witness)
    guard = "+- EQUALS_MATCH: ___dict_version(G['x']) == {} and B == frozenset({{{}}})  # at 0x{}"
    a = guard.format(41, "<class 'list'>, <function f at 0x7f01>, <class 'dict'>", "7f0a")
    b = guard.format(93, "<class 'dict'>, <class 'list'>, <function f at 0x7e02>", "7e0b")
    assert witness._plain(a) == witness._plain(b)
    other = guard.format(41, "<class 'list'>, <class 'tuple'>, <class 'dict'>", "7f0a")
    assert witness._plain(a) != witness._plain(other)


def _recorded_to_the_end(trace: Path) -> list[dict]:
    records = dump(trace)
    end = records[-1]
    # A window of steps ends where its last step does (`to_step`).
    ended = end["reason"] in ("stopped", "exit") or end["reason"].endswith("(to_step)")
    assert end["type"] == "end" and ended, end
    assert not [r for r in records if r["type"] == "gap"], trace
    return records


def _cpu_env(inductor_cache: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache),
        "CUDA_VISIBLE_DEVICES": "",
    }
    env.pop("TRITONTUI_RECORD", None)
    return env


def _program_launches(program: str, tmp_path: Path, inductor_cache: Path) -> list[dict]:
    """Runs a test program unrecorded and recorded (``TRITONTUI_RECORD``),
    checks that it compiled the same and recorded to the end; returns the
    recorded launches."""
    trace = tmp_path / "t.msgpack"
    env = _cpu_env(inductor_cache)
    command = [sys.executable, str(PROGRAMS / program)]
    recorded = {**env, "TRITONTUI_RECORD": str(trace)}
    compiles_as_unrecorded(tmp_path, command, env, recorded, ["launcher"])
    return [r for r in _recorded_to_the_end(trace) if r["type"] == "launch"]


def test_a_graph_compiled_while_recording_is_served_from_the_cache_as_unrecorded(
    run_program, tmp_path: Path
) -> None:
    # Every FX-graph cache key used to be marked while recording: a
    # recompile while recording compiled and autotuned again, and inside a
    # CUDA graph capture its autotuning failed the capture.
    proc = run_program("compile_cache.py", str(tmp_path / "t"), "ur")
    compiles = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert compiles == [
        {"recorded": False, "served": False, "hooked": False},
        {"recorded": True, "served": True, "hooked": False},
    ]
    assert launches(tmp_path / "t.1.msgpack"), "the recorded compile recorded nothing"


def test_an_eager_op_left_by_a_compiled_function_compiles_as_unrecorded(
    tmp_path: Path, inductor_cache: Path
) -> None:
    # The op's generator is described by Python of the recorder's, which
    # Dynamo compiled (two frames, one graph more) and whose compile
    # event, logged while the trace was held, stopped the recording.
    launches = _program_launches("eager_draw_in_compiled.py", tmp_path, inductor_cache)
    draws = [r for r in launches if r["kernel"] == "aten::randn.generator"]
    assert len(draws) == 2, [r["kernel"] for r in launches]
    assert draws[0]["args"][1]["value"].startswith("<torch.Generator device=cpu seed=0"), draws[0]


def test_a_compiled_function_waiting_for_a_collective_compiles_as_unrecorded(
    tmp_path: Path, inductor_cache: Path
) -> None:
    launches = _program_launches("collective_wait_in_compiled.py", tmp_path, inductor_cache)
    kernels = [r["kernel"] for r in launches]
    assert kernels.count("c10d::allreduce_") == 2 and kernels.count("Tensor.tolist") == 2, kernels


def test_compiled_ddp_records_to_the_end_and_compiles_as_unrecorded(
    tmp_path: Path, inductor_cache: Path
) -> None:
    # torch.compile(DDP(model)): Dynamo traced into the recorder (a graph
    # break in the recorder's own code), the DDP optimizer's guards took in
    # the recorder's mode, and each rank stopped recording on an internal
    # error before the first gradient all-reduce.
    env = _cpu_env(inductor_cache)
    compiles_as_unrecorded(
        tmp_path,
        [*TORCHRUN, str(PROGRAMS / "compiled_ddp.py")],
        env,
        {**env, "TRITONTUI_RECORD": "run/rank{rank}.msgpack"},
        ["0", "1"],
    )
    for rank in (0, 1):
        records = _recorded_to_the_end(tmp_path / "run" / f"rank{rank}.msgpack")
        kernels = [r["kernel"] for r in records if r["type"] == "launch"]
        # DDP's reducer all-reduces one bucket in the first step and its
        # three rebuilt 1 MB buckets in the second.
        assert kernels.count("c10d::allreduce_") == 4, kernels
        # The DDP optimizer's two bucket submodules, forward and backward.
        graphs = {r["graph"] for r in records if r["type"] == "input"}
        assert len(graphs) == 4, graphs


def _corpus(gpu: bool) -> list[str]:
    return sorted(p.stem for p in CORPUS.glob("[!_]*.py") if p.stem.startswith("gpu_") == gpu)


def _corpus_program_compiles_as_unrecorded(name: str, tmp_path: Path, env: dict[str, str]) -> None:
    """A corpus program, whose harness records it unless told not to."""
    trace = tmp_path / "t.msgpack"
    command = [sys.executable, str(CORPUS / f"{name}.py"), "--out", str(trace)]
    command += ["--fingerprint", str(tmp_path / "fingerprint.json")]
    ranks = ["0", "1"] if name.endswith("_ranks") else ["launcher"]
    compiles_as_unrecorded(tmp_path, command, {**env, "CORPUS_UNRECORDED": "1"}, env, ranks)
    _recorded_to_the_end(trace)


@pytest.mark.parametrize("name", _corpus(gpu=False))
def test_each_corpus_program_compiles_as_unrecorded(
    name: str, tmp_path: Path, inductor_cache: Path
) -> None:
    _corpus_program_compiles_as_unrecorded(name, tmp_path, _cpu_env(inductor_cache))


@pytest.mark.gpu
@pytest.mark.parametrize("name", _corpus(gpu=True))
def test_each_gpu_corpus_program_compiles_as_unrecorded(
    name: str, tmp_path: Path, inductor_cache: Path
) -> None:
    import torch

    if name.endswith("_ranks") and torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache)}
    env.pop("TRITONTUI_RECORD", None)
    _corpus_program_compiles_as_unrecorded(name, tmp_path, env)

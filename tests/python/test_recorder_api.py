"""The recorder's API and its promises: options, markers, the process
table, recording without code changes, crash safety, and never breaking
the program it records."""

from __future__ import annotations

import ast
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
import torch
import tritontui
from conftest import PROGRAMS, Tmux, binary, diff, dump, launches


def test_options_markers_and_the_process_table(tmp_path: Path) -> None:
    path = tmp_path / "t.msgpack"
    x = torch.randn(64)
    with tritontui.record(path, hash="none", stats=True):
        y = x * 2
        tritontui.mark("after the multiply")
        (y + 1).sum()
    records = dump(path)
    header = records[0]
    assert header["options"]["hash"] == "none" and not header["options"]["hash_inputs"]
    recorded = [r for r in records if r["type"] == "launch"]
    assert [r["kernel"] for r in recorded][:3] == [
        "aten::mul.Tensor",
        "aten::add.Tensor",
        "aten::sum",
    ]
    assert all(a.get("pre") is None and a.get("post") is None for r in recorded for a in r["args"])
    marker = next(r for r in records if r["type"] == "marker")
    assert marker["label"] == "after the multiply" and marker["after"] == 0
    main = next(r for r in records if r["type"] == "process")
    assert main["pid"] == os.getpid() and main["role"] == "main"
    assert records[-1]["type"] == "end" and records[-1]["complete"]


def test_stats_and_the_kernel_glob(tmp_path: Path) -> None:
    path = tmp_path / "t.msgpack"
    x = torch.tensor([1.0, -4.0, float("nan"), float("inf"), 2.0])
    with tritontui.record(path, stats=True, kernels="aten::mul*"):
        x * 2
        x + 1
    recorded = launches(path)
    assert [r["kernel"] for r in recorded] == ["aten::mul.Tensor"]
    result = recorded[0]["args"][-1]
    assert result["stats"] == {
        "min": -8.0,
        "max": 4.0,
        "mean_abs": 14.0 / 3.0,
        "nan": 1,
        "inf": 1,
        "norm": None,  # DebugMode's norm is NaN here
    }


def sample_positions(numel: int) -> list[int]:
    """The logical indices the recorder samples (docs/trace-format.md,
    *Samples*), written out again from the documented rule."""
    mask = (1 << 64) - 1

    def fmix64(h: int) -> int:
        h ^= h >> 33
        h = (h * 0xFF51AFD7ED558CCD) & mask
        h ^= h >> 33
        h = (h * 0xC4CEB9FE1A85EC53) & mask
        return h ^ (h >> 33)

    chunks = min(32, numel)
    length, longer = divmod(numel, chunks) if chunks else (0, 0)
    out = []
    for k in range(chunks):
        start = k * length + min(k, longer)
        size = length + (k < longer)
        out.append(start + fmix64(k + 1) % size)
    return out


def test_samples_are_the_written_tensors_elements_at_the_documented_places(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.msgpack"
    x = torch.randn(40, 30)
    small = torch.arange(5.0)
    with tritontui.record(path, samples=True):
        y = x.t() * 2  # a transposed view: logical order, not memory order
        z = small + 1
        n = torch.arange(6).neg()  # integers have no samples
    (mul,) = [r for r in launches(path) if r["kernel"] == "aten::mul.Tensor"]
    (add,) = [r for r in launches(path) if r["kernel"] == "aten::add.Tensor"]
    flat = y.flatten().tolist()
    assert mul["args"][-1]["samples"] == [flat[i] for i in sample_positions(y.numel())]
    assert add["args"][-1]["samples"] == z.tolist()
    # What a launch only reads has none; statistics are an option apart.
    assert mul["args"][0]["samples"] is None
    assert mul["args"][0]["stats"] is None and mul["args"][-1]["stats"] is None
    assert n.dtype == torch.int64 and all(
        a.get("samples") is None
        for r in launches(path)
        for a in r["args"]
        if a.get("dtype") == "int64"
    )


def test_samples_name_the_module_each_eager_op_ran_in(tmp_path: Path) -> None:
    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(8, 8)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.fc(x))

    model = torch.nn.Sequential(Block(), Block())
    path = tmp_path / "t.msgpack"
    with tritontui.record(path, samples=True):
        model(torch.randn(2, 8)).sum()
        model(torch.randn(2, 8)).sum()
    seen = [(r["kernel"], r["module"]) for r in launches(path)]
    assert ("aten::addmm", "1.fc") in seen and ("aten::relu", "1") in seen, seen
    # Outside every module: none.
    assert ("aten::sum", None) in seen, seen
    # Calls are counted within one call of the outermost module: the
    # second forward's are first calls again.
    assert not any("@" in (module or "") for _, module in seen), seen


def test_samples_are_off_by_default(tmp_path: Path) -> None:
    path = tmp_path / "t.msgpack"
    with tritontui.record(path):
        torch.ones(3) * 2
    assert all(a.get("samples") is None for r in launches(path) for a in r["args"])


def test_dump_gives_the_norm_debug_mode_compares(tmp_path: Path) -> None:
    from torch.utils._debug_mode import norm_hash_fn

    path = tmp_path / "t.msgpack"
    x = torch.randn(1000, dtype=torch.float64) * 1e3
    with tritontui.record(path, stats=True):
        y = x.half() * 3
    (launch,) = [r for r in launches(path) if r["kernel"] == "aten::mul.Tensor"]
    result = launch["args"][-1]
    expected = norm_hash_fn(y, use_scalar=True)
    assert result["stats"]["norm"] == pytest.approx(expected, rel=1e-12), result


@pytest.mark.internal_error
def test_an_internal_error_warns_once_and_the_program_goes_on(tmp_path: Path) -> None:
    from tritontui import _active

    path = tmp_path / "t.msgpack"
    x = torch.randn(32)
    tritontui.start(path)

    class Broken:
        """Stands in for a trace file whose disk has failed."""

        def __getattr__(self, name: str):
            def fail(*args, **kwargs):
                raise OSError("No space left on device")

            return fail

    good = _active.active().file
    _active.active().file = Broken()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = (x * 3).sin()
        z = y + 1
    good.close(0, "test")
    assert torch.equal(z, (x * 3).sin() + 1)
    stopped = [w for w in caught if "recording stopped" in str(w.message)]
    assert len(stopped) == 1, [str(w.message) for w in caught]
    assert "No space left on device" in str(stopped[0].message)
    assert not tritontui.is_recording()
    # The trace keeps what was written before the failure.
    assert dump(path)[0]["type"] == "header"


def test_a_tracer_s_fake_tensors_are_neither_recorded_nor_an_error(tmp_path: Path) -> None:
    from torch._subclasses.fake_tensor import FakeTensorMode

    path = tmp_path / "t.msgpack"
    fake_mode = FakeTensorMode()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tritontui.record(path):
            fake = fake_mode.from_tensor(torch.ones(4))
            # The aten mode sees a fake tensor first (user modes come before
            # a tensor subclass's own dispatch), then under the fake mode.
            doubled = fake * 2
            with fake_mode:
                torch.empty(3).add_(1)
            y = torch.ones(4) * 3
            assert tritontui.is_recording()
    assert doubled.shape == (4,) and torch.equal(y, torch.full((4,), 3.0))
    assert not [w for w in caught if "recording stopped" in str(w.message)]
    kernels = [r["kernel"] for r in launches(path)]
    # The real tensor the fake one was made from, then y's two ops.
    assert kernels == ["aten::ones", "aten::ones", "aten::mul.Tensor"], kernels


def test_a_view_past_its_freed_storage_is_described_but_never_read(tmp_path: Path) -> None:
    # FSDP frees a parameter's memory by resizing its storage to nothing
    # and keeps the parameter; reading its view would read address 40.
    path = tmp_path / "t.msgpack"
    base = torch.zeros(1000)
    view = base[10:20]
    base.untyped_storage().resize_(0)
    with tritontui.record(path):
        fresh = torch.empty_like(view)
        y = torch.ones(3) * 2
    assert fresh.shape == (10,) and torch.equal(y, torch.full((3,), 2.0))
    first = launches(path)[0]
    assert first["kernel"] == "aten::empty_like"
    freed = first["args"][0]
    assert (freed["shape"], freed["pre"], freed["post"]) == ([10], None, None), freed


@pytest.mark.internal_error
def test_an_internal_error_under_another_mode_leaves_that_mode_in_place(
    monkeypatch, tmp_path: Path
) -> None:
    from torch._subclasses.fake_tensor import FakeTensorMode
    from tritontui.hooks import aten

    def broken(session, func):
        raise RuntimeError("planning failed")

    # The dispatch mode's stack (the native observer puts no mode there and
    # hands a tracer's ops to no hook).
    monkeypatch.setenv("TRITONTUI_ATEN_OBSERVER", "0")
    path = tmp_path / "t.msgpack"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tritontui.record(path):
            monkeypatch.setattr(aten, "plan", broken)
            # The error comes while the aten mode is off the stack for its
            # own dispatch and the fake mode is on top: stopping must not
            # pop the fake mode, whose exit would then fail.
            with FakeTensorMode():
                z = torch.empty(2).add_(1)
            assert z.shape == (2,)
    stopped = [w for w in caught if "recording stopped" in str(w.message)]
    assert len(stopped) == 1 and "planning failed" in str(stopped[0].message)
    # Ops run as ever afterwards.
    assert torch.equal(torch.ones(2) + 1, torch.full((2,), 2.0))


@pytest.mark.internal_error
def test_an_internal_error_in_the_observer_stops_recording_once_and_ops_run_on(
    monkeypatch, tmp_path: Path
) -> None:
    from tritontui.hooks import aten

    def broken(session, func):
        raise RuntimeError("planning failed")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tritontui.record(tmp_path / "t.msgpack"):
            monkeypatch.setattr(aten, "plan", broken)
            z = torch.empty(2).fill_(1).add_(1)
    assert torch.equal(z, torch.full((2,), 2.0))
    stopped = [w for w in caught if "recording stopped" in str(w.message)]
    assert len(stopped) == 1 and "planning failed" in str(stopped[0].message)
    assert torch.equal(torch.ones(2) + 1, torch.full((2,), 2.0))


def test_recording_without_code_changes(tmp_path: Path, inductor_cache: Path) -> None:
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache)}
    plain = [sys.executable, str(PROGRAMS / "plain.py")]
    subprocess.run(
        plain, cwd=tmp_path, env={**env, "TRITONTUI_RECORD": "env-{pid}.msgpack"}, check=True
    )
    traces = list(tmp_path.glob("env-*.msgpack"))
    assert len(traces) == 1 and traces[0].name != "env-{pid}.msgpack"
    assert any(r["kernel"].startswith("cpp_fused") for r in launches(traces[0]))
    # The same through the CLI, whose exit status is the program's.
    proc = subprocess.run(
        [binary(), "record", "-o", "cli.msgpack", "--no-aten", "--", *plain],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    recorded = launches(tmp_path / "cli.msgpack")
    assert recorded and all(r["backend"] == "cpp" for r in recorded)
    status, _ = diff(traces[0], tmp_path / "cli.msgpack")
    assert status == 1  # one has aten ops, the other not: structural
    failing = subprocess.run(
        [binary(), "record", "-o", "x.msgpack", "--", sys.executable, "-c", "raise SystemExit(3)"],
        cwd=tmp_path,
    )
    assert failing.returncode == 3


def test_a_killed_recording_keeps_every_record(tmp_path: Path, inductor_cache: Path) -> None:
    path = tmp_path / "killed.msgpack"
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache)}
    proc = subprocess.Popen(
        [sys.executable, str(PROGRAMS / "loop.py"), str(path)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout.readline().strip() == "recording"
        deadline = time.monotonic() + 120
        while (not path.exists() or path.stat().st_size < 200_000) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    records = dump(path)
    end = records[-1]
    assert not end["complete"] and end["ended_early"]
    assert end["launches"] > 100
    seqs = [r["seq"] for r in records if r["type"] == "launch"]
    assert seqs == list(range(len(seqs)))
    # It compares against itself with a warning, not an error; what the
    # program did after the kill was not seen: inconclusive, not identical.
    proc = subprocess.run([binary(), "diff", str(path), str(path)], capture_output=True, text=True)
    assert proc.returncode == 3 and "ended early" in proc.stderr, proc.stdout + proc.stderr
    assert "inconclusive:" in proc.stdout, proc.stdout


def test_a_recording_never_stopped_ends_with_the_program(tmp_path: Path) -> None:
    path = tmp_path / "unstopped.msgpack"
    program = (
        "import sys, torch, tritontui\n"
        "tritontui.start(sys.argv[1])\n"
        "torch.ones(3).add_(1)\n"
        "print('done')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", program, str(path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "done", proc.stderr
    records = dump(path)
    assert records[-1]["reason"] == "exit" and records[-1]["complete"], records[-1]
    assert any(r["type"] == "launch" and r["kernel"] == "aten::add_.Tensor" for r in records)


@pytest.mark.parametrize(
    ("start", "ending", "reason"),
    [
        (
            "tritontui.start(sys.argv[1])",
            "raise RuntimeError('boom\\nmore')",
            "raised RuntimeError: boom",
        ),
        (
            "tritontui.start(sys.argv[1])",
            "raise torch.OutOfMemoryError('CUDA out of memory. Tried to allocate 2.00 GiB')",
            "raised torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        ),
        (
            "tritontui.start(sys.argv[1])",
            "raise RuntimeError(\"backend='inductor' raised:\\nAssertionError: Node mm_2\\nmore\")",
            "raised RuntimeError: backend='inductor' raised: AssertionError: Node mm_2",
        ),
        ("tritontui.start(sys.argv[1])", "sys.exit(3)", "exit"),
        ("with tritontui.record(sys.argv[1]):", "    raise KeyError('w')", "raised KeyError: 'w'"),
        ("with tritontui.record(sys.argv[1]):", "    sys.exit(3)", "stopped"),
        (
            "class Unsaid(Exception):\n    def __str__(self): raise ValueError\n"
            "with tritontui.record(sys.argv[1]):",
            "    raise Unsaid",
            "raised __main__.Unsaid",
        ),
    ],
)
def test_the_end_record_says_what_the_program_raised(
    tmp_path: Path, start: str, ending: str, reason: str
) -> None:
    """A run that stopped by raising is not a shorter run of the same
    program: its trace says what it raised (`diff` shows it beside the
    run and explains the launches the other run made after it)."""
    path = tmp_path / "t.msgpack"
    indent = "    " if start.endswith(":") else ""
    program = f"import sys, torch, tritontui\n{start}\n{indent}torch.ones(3).add_(1)\n{ending}\n"
    proc = subprocess.run(
        [sys.executable, "-c", program, str(path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode != 0, proc.stderr
    records = dump(path)
    assert records[-1]["reason"] == reason and records[-1]["complete"], records[-1]
    assert any(r["type"] == "launch" and r["kernel"] == "aten::add_.Tensor" for r in records)


def test_a_trace_file_dropped_unclosed_lets_the_program_exit(tmp_path: Path) -> None:
    # What a session left unstopped leaves behind if nothing stops it.
    program = (
        "import json, sys, tempfile\n"
        "from tritontui import _native\n"
        "header = {'format': 'tritontui-trace', 'version': [1, 2], 'created_ns': 0}\n"
        "f = _native.TraceFile(sys.argv[1], json.dumps(header), tempfile.gettempdir())\n"
        "del f\n"
        "print('done')\n"
    )
    path = tmp_path / "dropped.msgpack"
    proc = subprocess.run(
        [sys.executable, "-c", program, str(path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "done", proc.stderr
    records = dump(path)
    assert records[-1]["ended_early"], records[-1]


def test_recording_twice_at_once_is_refused(tmp_path: Path) -> None:
    with (
        tritontui.record(tmp_path / "a.msgpack"),
        pytest.raises(RuntimeError, match="already recording"),
    ):
        tritontui.start(tmp_path / "b.msgpack")
    assert not tritontui.is_recording()


def test_a_kernel_glob_pauses_one_process_once(monkeypatch, tmp_path: Path) -> None:
    import tempfile

    from tritontui import _pause

    monkeypatch.setenv("TRITONTUI_BREAK_ID", f"test-{os.getpid()}")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    # The recorded process and a compile worker, each with the same points.
    main, worker = _pause.PausePoints("triton_*,3"), _pause.PausePoints("triton_*,3")
    assert worker.take(-1, "triton_poi_fused_0")
    assert not worker.take(-1, "triton_red_fused_1")
    assert not main.take(0, "triton_poi_fused_0")
    assert main.take(3, "cpp_fused_2")  # launch numbers are the recorded process's
    _pause.release_claims()
    assert not list(tmp_path.iterdir())
    with pytest.raises(ValueError, match="no launch number"):
        _pause.PausePoints(" , ")


def test_two_threads_record_into_one_trace(tmp_path: Path) -> None:
    import threading

    f = torch.compile(lambda x: (x * 2).relu().sum(0) + 1)
    inputs = [torch.randn(1 << 18, 8) for _ in range(2)]
    f(inputs[0])
    path = tmp_path / "threads.msgpack"

    def calls(x: torch.Tensor) -> None:
        for _ in range(20):
            f(x)

    with tritontui.record(path, aten=False):
        threads = [threading.Thread(target=calls, args=(x,)) for x in inputs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    records = dump(path)
    assert records[-1]["reason"] == "stopped", records[-1]
    assert len([r for r in records if r["type"] == "launch"]) == 40


@pytest.mark.parametrize("cuda_graphs", [None, False])
def test_a_compile_asking_for_cuda_graphs_gets_them_unless_they_are_turned_off(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cuda_graphs: bool | None
) -> None:
    # By default the program compiles as it asked (its graphs are
    # recorded as they run); cuda_graphs=False turns them off, with a
    # warning, a compile record, and the header saying so.
    import torch._inductor.compile_fx as compile_fx

    asked: list[dict] = []

    def compiled(model, inputs, config_patches=None, **kwargs):
        asked.append(dict(config_patches or {}))
        return model

    monkeypatch.setattr(compile_fx, "compile_fx", compiled)
    torch._dynamo.reset()
    f = torch.compile(lambda x: x * 2 + 1, mode="reduce-overhead")
    path = tmp_path / "t.msgpack"
    options = {} if cuda_graphs is None else {"cuda_graphs": cuda_graphs}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tritontui.record(path, **options):
            assert torch.equal(f(torch.ones(3)), torch.full((3,), 3.0))
    torch._dynamo.reset()
    records = dump(path)
    said = [r for r in records if r["type"] == "compile" and r["event"] == "graph"]
    turned_off = cuda_graphs is False
    assert [a["triton.cudagraphs"] for a in asked] == [not turned_off]
    assert any("asked for CUDA graphs" in str(w.message) for w in caught) == turned_off
    assert records[0]["options"]["cuda_graphs_disabled"] == turned_off, records[0]
    assert [r["info"] for r in said] == [{"cuda_graphs_disabled": True}] * turned_off, said


def test_a_cpp_wrapper_graph_compiled_while_recording_records_its_launches(
    tmp_path: Path,
) -> None:
    # Its C++ wrapper calls the recorder around each launch: no warning,
    # no unrecorded graph, its inputs and its C++ kernel recorded.
    torch._dynamo.reset()
    f = torch.compile(lambda x: (x * 2 + 1).relu(), options={"cpp_wrapper": True})
    x = torch.ones(8)
    path = tmp_path / "t.msgpack"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tritontui.record(path):
            for _ in range(2):
                assert torch.equal(f(x), torch.full((8,), 3.0))
    torch._dynamo.reset()
    assert not [w for w in caught if "tritontui" in str(w.message)], caught
    records = dump(path)
    assert not [r for r in records if "unrecorded" in r.get("info", {})]
    assert [r for r in records if r["type"] == "input"], "graph inputs are recorded"
    recorded = [r for r in records if r["type"] == "launch"]
    cpp = [r for r in recorded if r["backend"] == "cpp"]
    assert len(cpp) == 2, [r["kernel"] for r in recorded]
    assert [a["post"] for a in cpp[0]["args"]] == [a["post"] for a in cpp[1]["args"]]
    # Its wrapper allocates and copies unseen: nothing in it takes a hash
    # from the data flow.
    assert not [a for r in recorded for a in r["args"] if a.get("inherited")]


def test_a_hash_function_of_your_own_is_recorded_and_compared(tmp_path: Path) -> None:
    # DebugMode's norm beside (here: instead of) the exact hashes: dump
    # shows it per tensor, and diff compares its values where a tensor has
    # no exact hash.
    from torch.utils._debug_mode import norm_hash_fn

    f = torch.compile(lambda t: (t * 2).sin().sum(0))

    def run(name: str, bump: float, hash_fn: object = "norm") -> torch.Tensor:
        x = torch.arange(64.0).reshape(8, 8) / 10
        x[3, 3] += bump
        with tritontui.record(tmp_path / name, hash="none", hash_fn=hash_fn):
            f(x)
        return x

    x = run("a.msgpack", 0.0)
    run("b.msgpack", 0.0)
    run("c.msgpack", 1.0)
    (kernel,) = [r for r in launches(tmp_path / "a.msgpack") if r["backend"] == "cpp"]
    tensors = [a for a in kernel["args"] if "dtype" in a]
    assert all(a["custom_hash"]["fn"] == "norm" for a in tensors), tensors
    assert tensors[0]["pre"] is None
    assert tensors[0]["custom_hash"]["pre"] == norm_hash_fn(x, use_scalar=True), tensors[0]
    status, report = diff(tmp_path / "a.msgpack", tmp_path / "b.msgpack")
    assert status == 0 and report["first_divergence"] is None, report
    # Run A started before f was compiled, B after: Inductor setting some
    # of its config entries to their defaults meanwhile changes no setting.
    assert report["settings"] == [], report["settings"]
    # The bumped input is found by its norm alone (its result is dropped,
    # so the difference is absorbed).
    _, report = diff(tmp_path / "a.msgpack", tmp_path / "c.msgpack")
    first = report["first_divergence"]
    assert (first["a_index"], first["kind"]) == (kernel["seq"], "divergent-input"), report

    # A callable of the program's own, named by its __name__.
    def total(t: torch.Tensor) -> float:
        return float(t.double().sum())

    run("own.msgpack", 0.0, total)
    (kernel,) = [r for r in launches(tmp_path / "own.msgpack") if r["backend"] == "cpp"]
    first = next(a for a in kernel["args"] if "dtype" in a)
    assert first["custom_hash"] == {
        "fn": "total",
        "pre": float(x.double().sum()),
        "post": float(x.double().sum()),
    }


def test_diff_says_first_what_differs_between_the_runs_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same work recorded twice, the second run with an Inductor config
    # changed and cuBLAS's workspace variable set: the comparison says so
    # before anything else.
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    x = torch.arange(8.0)
    with tritontui.record(tmp_path / "a.msgpack"):
        x * 2
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    with (
        torch._inductor.config.patch(fallback_random=True),
        tritontui.record(tmp_path / "b.msgpack"),
    ):
        x * 2
    header = dump(tmp_path / "b.msgpack")[0]
    assert header["settings"]["torch.num_threads"] == str(torch.get_num_threads())
    status, report = diff(tmp_path / "a.msgpack", tmp_path / "b.msgpack")
    assert status == 0, report
    assert report["settings"] == [
        {"name": "env.CUBLAS_WORKSPACE_CONFIG", "a": None, "b": ":4096:8"},
        {"name": "inductor.fallback_random", "a": None, "b": "True"},
    ]
    text = subprocess.run(
        [binary(), "diff", str(tmp_path / "a.msgpack"), str(tmp_path / "b.msgpack")],
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    assert text[2:5] == [
        "settings differ (A | B):",
        "  env.CUBLAS_WORKSPACE_CONFIG: (unset) | :4096:8",
        "  inductor.fallback_random: (unset) | True",
    ], text
    if shutil.which("tmux"):
        with Tmux(f"{binary()} {tmp_path / 'a.msgpack'} {tmp_path / 'b.msgpack'}") as tmux:
            screen = tmux.wait_for("SETTINGS DIFFER", timeout=60)
            assert "inductor.fallback_random: (unset) | True" in screen, screen
            tmux.send("q")
            tmux.wait_for("EXIT=")


def test_a_capture_a_stopped_recording_left_under_way_is_not_the_next_one_s(
    tmp_path: Path,
) -> None:
    # A recording stopped while this thread captured a CUDA graph (as
    # CUDAGraph.capture_begin begins one) must not make the next
    # recording's launches captured ones, nor stop them inheriting hashes.
    with tritontui.record(tmp_path / "first.msgpack"):
        tritontui._active.active().file.cuda_graph_begin(0, 0, False)
    torch._dynamo.reset()
    f = torch.compile(lambda x: torch.mm(x, x).relu().sum())
    path = tmp_path / "second.msgpack"
    with tritontui.record(path):
        f(torch.randn(16, 16))
    torch._dynamo.reset()
    records = dump(path)
    assert not [r for r in records if r["type"] == "cuda_graph"]
    inherited = [a for r in launches(path) for a in r["args"] if a.get("inherited")]
    assert inherited, [r["kernel"] for r in launches(path)]


def test_the_header_names_the_triton_torch_will_import_before_it_is_imported(
    monkeypatch, tmp_path: Path
) -> None:
    """A recording usually begins before Inductor imports triton; the
    header still says which one (`repro` refuses another), as
    `triton.__version__` says it."""
    import importlib.metadata

    def installed(package: str) -> str:
        if package == "pytorch-triton":
            return "3.6.0+git9a1b2c3"
        raise importlib.metadata.PackageNotFoundError(package)

    monkeypatch.delitem(sys.modules, "triton", raising=False)
    monkeypatch.setattr(importlib.metadata, "version", installed)
    path = tmp_path / "t.msgpack"
    with tritontui.record(path):
        torch.ones(4).sum()
    assert dump(path)[0]["triton"] == "3.6.0"


def test_a_cpp_kernel_follows_each_sessions_kernel_glob(tmp_path: Path) -> None:
    f = torch.compile(lambda x: (x * 1.5 + 1).relu())
    x = torch.randn(64)
    f(x)
    first, second = tmp_path / "a.msgpack", tmp_path / "b.msgpack"
    with tritontui.record(first, kernels="aten::*"):
        f(x)
    with tritontui.record(second):
        f(x)
        f(x)
    assert not [r for r in launches(first) if r["kernel"].startswith("cpp_fused")]
    ours = [r for r in launches(second) if r["kernel"].startswith("cpp_fused")]
    assert len(ours) == 2 and ours[0]["kernel"] == ours[1]["kernel"], ours
    assert [a["access"] for a in ours[0]["args"]] == ["in", "out"], ours[0]["args"]


def test_the_phase_timers_count_only_while_on(tmp_path: Path) -> None:
    from tritontui import _native

    def counts() -> dict[str, int]:
        return {phase: count for phase, _, count in _native.phase_times()}

    with tritontui.record(tmp_path / "t.msgpack"):
        torch.ones(4).add(1)
        assert counts()["aten hook"] == 0
        _native.time_phases(True)
        try:
            torch.ones(4).add(1)
            timed = counts()
        finally:
            _native.time_phases(False)
    # ones and add, each handed to the aten hook by the native observer
    # before it runs and after, and described (a dispatch mode an earlier
    # test left on the stack runs them too, unrecorded, timed as its own
    # hook and run).
    assert timed["aten hook"] >= 4, timed
    assert timed["describe"] >= 2, timed
    assert counts()["aten hook"] == 0


def test_an_aten_op_s_read_only_argument_is_not_hashed_again_after_it(tmp_path: Path) -> None:
    from tritontui import _native

    a, b = torch.randn(4096), torch.randn(4096)
    trace = tmp_path / "t.msgpack"
    with tritontui.record(trace):
        _native.time_phases(True)
        try:
            a.mul_(b)
            hashed = {phase: count for phase, _, count in _native.phase_times()}["host hash"]
        finally:
            _native.time_phases(False)
        # Its `other` is its `self`: read and written, hashed after.
        a.mul_(a)
    plain, squared = [r for r in launches(trace) if r["kernel"] == "aten::mul_.Tensor"]
    # a before and after, b before only: a schema's read-only argument
    # sharing no byte with a written one keeps its bytes.
    assert hashed == 3
    written, read = (t for t in plain["args"] if "dtype" in t)
    assert read["post"] == read["pre"] == f"0x{tritontui.hash_tensor(b):016x}", read
    assert not read["written"] and written["written"]
    written, read = (t for t in squared["args"] if "dtype" in t)
    assert read["pre"] != read["post"] == written["post"] == f"0x{tritontui.hash_tensor(a):016x}"
    assert read["written"], read


def test_each_option_comes_from_its_keyword_else_its_variable_else_its_default() -> None:
    from tritontui import _options

    defaults = _options.resolve({}, environ={})
    assert (defaults.hash, defaults.aten, defaults.kernels, defaults.stats) == (
        "both",
        True,
        "*",
        False,
    )
    assert (defaults.capture, defaults.capture_budget, defaults.cuda_graphs) == (None, None, True)
    env = {
        "TRITONTUI_HASH": "none",
        "TRITONTUI_ATEN": "no",
        "TRITONTUI_STATS": "1",
        "TRITONTUI_CAPTURE_BUDGET": "1024",
        "TRITONTUI_CUDA_GRAPHS": "false",
        "TRITONTUI_KERNELS": "",
    }
    read = _options.resolve({}, environ=env)
    assert (read.hash, read.aten, read.stats, read.capture_budget, read.cuda_graphs) == (
        "none",
        False,
        True,
        1024,
        False,
    )
    assert read.kernels == "*"  # an empty variable is unset
    given = _options.resolve({"hash": "inputs", "aten": True}, environ=env)
    assert (given.hash, given.aten, given.stats) == ("inputs", True, True)
    assert (given.hash_inputs, given.hash_outputs) == (True, False)
    with pytest.raises(ValueError, match=r'aten \(TRITONTUI_ATEN\) is "maybe"; it takes 1, true'):
        _options.resolve({}, environ={"TRITONTUI_ATEN": "maybe"})
    with pytest.raises(ValueError, match="it takes both, inputs, outputs, none"):
        _options.resolve({"hash": "all"}, environ={})
    with pytest.raises(TypeError, match="no recording option colour"):
        _options.resolve({"colour": "red"}, environ={})


def test_the_environment_is_read_and_set_in_one_module() -> None:
    # Every variable the package reads or sets is named in _environment;
    # a module reaching into os.environ itself would escape that list.
    package = Path(tritontui.__file__).parent
    touching = [
        f"{path.relative_to(package)}:{number}"
        for path in sorted(package.rglob("*.py"))
        if path.name != "_environment.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "os.environ" in line or "getenv" in line or "putenv" in line
    ]
    assert touching == [], touching


def test_no_module_of_the_package_imports_in_a_circle() -> None:
    # Function-level imports count: a circle there is one too, only later.
    package = Path(tritontui.__file__).parent
    modules = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    # The native extension is a module of the package too, with no imports.
    native = "tritontui._native"
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                source = ".".join([*base, node.module] if node.module else base)
                targets = [f"{source}.{alias.name}" for alias in node.names]
                edges[name].update(t if t in modules or t == native else source for t in targets)
            elif isinstance(node, ast.Import):
                edges[name].update(alias.name for alias in node.names)
        edges[name] = {t for t in edges[name] if t in modules and t != name}

    def circle_through(path: list[str]) -> list[str] | None:
        for child in sorted(edges[path[-1]]):
            if child == path[0]:
                return [*path, child]
            if child not in path and child > path[0]:
                found = circle_through([*path, child])
                if found:
                    return found
        return None

    circles = [c for name in sorted(modules) if (c := circle_through([name]))]
    assert circles == [], circles[0]

"""Long runs (issue 60): steps, fingerprints, windows of steps recorded
in full, and ``check --steps``, on the CPU (and on a GPU where marked).
``programs/long_steps.py`` trains a compiled MLP for a few steps and
writes, after recording stopped, the hashes of the clones it took as each
step ended: the truth the fingerprints are checked against."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import torch
import tritontui
from conftest import binary, check, dump

LONG_STEPS = "long_steps.py"


def fingerprint_env(**variables: str) -> dict[str, str]:
    return {"LONG_STEPS_TRACE": "trace.msgpack", "EXPECT": "expect.json", **variables}


def records(trace: Path, kind: str) -> list[dict]:
    return [r for r in dump(trace) if r.get("type") == kind]


def digest(hashes: list[int]) -> int:
    """The one hash a fingerprint folds its tensors' hashes into."""
    return tritontui.hash_bytes(b"".join(b"\x01" + h.to_bytes(8, "little") for h in hashes))


def fingerprints_match_their_clones(tmp_path: Path, run_program, device: str) -> None:
    run_program(LONG_STEPS, env=fingerprint_env(TRITONTUI_FINGERPRINT="1", DEVICE=device))
    expect = json.loads((tmp_path / "expect.json").read_text())
    trace = tmp_path / "trace.msgpack"
    launches = records(trace, "launch")
    steps = records(trace, "step")
    assert [s["step"] for s in steps] == list(range(6)), steps
    assert {s["by"] for s in steps} == {"optimizer"}
    # Only fingerprints: graph calls, the state at each step's end, the
    # last loss read on the host (AdamW's own reads of its step counts
    # are left to its state); no launch of a kernel.
    assert all(launch["fingerprint"] for launch in launches)
    kernels = [launch["kernel"] for launch in launches]
    assert kernels[-1] == "Tensor.item", kernels
    for step, hashes in enumerate(expect):
        mine = [launch for launch in launches if launch["step"] == step]
        assert [launch["kernel"].split()[0] for launch in mine] == ["graph", "graph", "step"]
        # Each fingerprint is one argument: its tensors' hashes folded.
        assert all(len(launch["args"]) == 1 for launch in mine)
        assert mine[2]["args"][0]["value"] == digest(hashes), step
        # The same graphs each step, with other values.
        assert mine[0]["kernel"] == launches[0]["kernel"]


def test_fingerprints_are_the_hashes_of_what_they_name(tmp_path: Path, run_program) -> None:
    fingerprints_match_their_clones(tmp_path, run_program, "cpu")


@pytest.mark.gpu
def test_fingerprints_on_the_device_are_the_hashes_of_what_they_name(
    tmp_path: Path, run_program
) -> None:
    fingerprints_match_their_clones(tmp_path, run_program, "cuda")


class _Marked(torch.Tensor):
    """A tensor subclass: its bytes are not its own to fingerprint."""


def test_a_graph_calls_fingerprint_folds_its_plain_tensors_alone(tmp_path: Path) -> None:
    """What a graph call returned may hold sizes, None, and tensors whose
    bytes are not plainly theirs (a subclass, a sparse tensor, one on the
    meta device): its fingerprint, read natively, folds the hashes of its
    plain dense tensors alone, in order (a parameter and a transposed view
    among them)."""
    from tritontui import _active, _fingerprints

    plain = [
        torch.arange(6.0),
        torch.nn.Parameter(torch.ones(2, 3)),
        torch.arange(12).view(3, 4).t(),
    ]
    values = [
        plain[0],
        None,
        7,
        torch.ones(3).as_subclass(_Marked),
        plain[1],
        torch.ones(2).to_sparse(),
        torch.empty(4, device="meta"),
        plain[2],
    ]
    trace = tmp_path / "t.msgpack"
    with tritontui.record(trace, fingerprint=True):
        _fingerprints.graph_call(_active.active(), "g", values)
        _fingerprints.graph_call(_active.active(), "g", [])
    calls = [launch for launch in records(trace, "launch") if launch["kernel"] == "graph g"]
    assert [len(launch["args"]) for launch in calls] == [1, 1]
    assert calls[0]["args"][0]["value"] == digest([tritontui.hash_tensor(t) for t in plain])
    assert calls[1]["args"][0]["value"] == digest([])


def test_a_fingerprint_hashes_each_tensor_once(tmp_path: Path) -> None:
    """A step's state is hashed before its fingerprint's launch and a
    graph call's outputs after theirs, never both (here with statistics
    and samples asked for too, which the digest would drop), each
    tensor's hash folded into the digest."""
    from tritontui import _active, _fingerprints, _native, _results

    state = [torch.randn(64) for _ in range(3)]
    outputs = [torch.randn(32), torch.randn(4, 4)]
    trace = tmp_path / "t.msgpack"
    with tritontui.record(trace, fingerprint=True, stats=True, samples=True):
        session = _active.active()
        _native.time_phases(True)
        try:
            _fingerprints.state(session, [_results.Live(t, f"s{i}") for i, t in enumerate(state)])
            after_state = {phase: count for phase, _, count in _native.phase_times()}
            _fingerprints.graph_call(session, "g", outputs)
            after_call = {phase: count for phase, _, count in _native.phase_times()}
        finally:
            _native.time_phases(False)
    assert after_state["host hash"] == len(state), after_state
    assert after_call["host hash"] == len(state) + len(outputs), after_call
    kernels = ("step state", "graph g")
    step_state, call = (r for r in records(trace, "launch") if r["kernel"] in kernels)
    assert step_state["args"][0]["value"] == digest([tritontui.hash_tensor(t) for t in state])
    assert call["args"][0]["value"] == digest([tritontui.hash_tensor(t) for t in outputs])


def test_a_steps_state_is_what_its_optimizer_holds_at_its_end() -> None:
    """A step's end fingerprints each parameter, group by group, followed
    by its optimizer state in key order (sorted as text), and finds it
    again where the optimizer replaced a state tensor or gave a parameter
    state for the first time: never what it held a step before."""
    from tritontui import _results

    first, second = torch.nn.Parameter(torch.randn(3)), torch.nn.Parameter(torch.randn(2))
    optimizer = torch.optim.Adam([{"params": [second]}, {"params": [first]}])
    second.grad = torch.ones(2)
    optimizer.step()
    training = _results.TrainingState()

    def held() -> list[int]:
        """The ids of this test's tensors among the state, in order."""
        mine = {id(first), id(second)}
        mine |= {id(t) for p in (first, second) for t in optimizer.state.get(p, {}).values()}
        return [id(live.tensor) for live in training.tensors() if id(live.tensor) in mine]

    def in_key_order(p: torch.Tensor) -> list[int]:
        return [id(optimizer.state[p][key]) for key in ("exp_avg", "exp_avg_sq", "step")]

    assert held() == [id(second), *in_key_order(second), id(first)]
    assert training.tensors() is training.tensors()
    optimizer.state[second]["exp_avg"] = torch.zeros(2)
    first.grad = torch.ones(3)
    optimizer.step()
    assert held() == [id(second), *in_key_order(second), id(first), *in_key_order(first)]


def test_a_forward_leaves_what_it_saves_for_its_backward_to_the_backward(
    tmp_path: Path,
) -> None:
    """An autograd forward's call returns the activations it saves for its
    backward after its outputs: its fingerprint folds its output alone,
    and the backward's, the gradient those activations made; at every call
    (where they lie is found at the first)."""
    torch.manual_seed(0)
    w = torch.randn(16, 16, requires_grad=True)
    compiled = torch.compile(lambda x: (x @ w).relu().tanh() * 2)
    compiled(torch.randn(8, 16)).sum().backward()
    trace = tmp_path / "t.msgpack"
    outputs, grads = [], []
    with tritontui.record(trace, fingerprint=True):
        for _ in range(2):
            w.grad = None
            outputs.append(compiled(torch.randn(8, 16)))
            outputs[-1].sum().backward()
            grads.append(w.grad)
    calls = [launch for launch in records(trace, "launch") if launch["kernel"].startswith("graph ")]
    assert len(calls) == 4, calls
    for i, (out, grad) in enumerate(zip(outputs, grads, strict=True)):
        forward, backward = calls[2 * i], calls[2 * i + 1]
        assert forward["args"][0]["value"] == digest([tritontui.hash_tensor(out)])
        assert backward["args"][0]["value"] == digest([tritontui.hash_tensor(grad)])


@pytest.mark.gpu
def test_a_graph_call_inside_a_cuda_graph_capture_is_not_fingerprinted(tmp_path: Path) -> None:
    """A compiled call captured into a CUDA graph has no outputs yet when
    it returns: a gap says so, once; the call after the capture is
    fingerprinted."""
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    compiled = torch.compile(lambda x: x * 2 + 1)
    x = torch.ones(1024, device="cuda")
    compiled(x)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    trace = tmp_path / "t.msgpack"
    with tritontui.record(trace, fingerprint=True):
        with torch.cuda.graph(graph):
            compiled(x)
            compiled(x)
        graph.replay()
        after = compiled(x)
        torch.cuda.synchronize()
    gaps = [gap for gap in records(trace, "gap") if gap["what"] == "fingerprint"]
    assert len(gaps) == 1 and "CUDA graph capture" in gaps[0]["detail"], gaps
    calls = [launch for launch in records(trace, "launch") if launch["kernel"].startswith("graph")]
    assert len(calls) == 1
    assert calls[0]["args"][0]["value"] == digest([tritontui.hash_tensor(after)])


@pytest.mark.parametrize(("mode", "by"), [("manual", "user"), ("both", "optimizer")])
def test_steps_end_where_an_optimizer_or_the_program_says(
    tmp_path: Path, run_program, mode: str, by: str
) -> None:
    """``tritontui.step()`` ends the steps of a loop without an optimizer;
    with both, the optimizer ended one first and alone counts them."""
    run_program(LONG_STEPS, env={"LONG_STEPS_TRACE": "trace.msgpack", "MODE": mode})
    trace = tmp_path / "trace.msgpack"
    steps = records(trace, "step")
    assert [(s["step"], s["by"]) for s in steps] == [(i, by) for i in range(6)]
    launches = records(trace, "launch")
    assert not any(launch["fingerprint"] for launch in launches)
    # Every launch carries its step: those before the first end are step 0.
    assert [launch["step"] for launch in launches] == sorted(launch["step"] for launch in launches)
    assert launches[0]["step"] == 0 and launches[-1]["step"] in (5, 6)


def test_a_window_records_its_steps_alone_in_full(tmp_path: Path, run_program) -> None:
    run_program(
        LONG_STEPS,
        env={
            "LONG_STEPS_TRACE": "trace.msgpack",
            "TRITONTUI_FROM_STEP": "2",
            "TRITONTUI_TO_STEP": "3",
        },
    )
    trace = tmp_path / "trace.msgpack"
    rows = dump(trace)
    assert rows[0]["options"]["fingerprint"] and rows[0]["options"]["from_step"] == 2
    launches = records(trace, "launch")
    assert {launch["step"] for launch in launches if launch["fingerprint"]} == {0, 1}
    full = [launch for launch in launches if not launch["fingerprint"]]
    assert {launch["step"] for launch in full} == {2, 3}
    # Kernels and aten ops alike are recorded from step 2 on.
    assert any(launch["kernel"].startswith("cpp_fused") for launch in full)
    assert any(launch["kernel"] == "aten::addcdiv_" for launch in full)
    assert [s["step"] for s in records(trace, "step")] == [0, 1, 2, 3]
    end = rows[-1]
    assert end["type"] == "end" and "to_step" in end["reason"], end
    # What the program held as step 2 began, for the results to be judged by.
    assert records(trace, "held")


def test_step_options_take_step_numbers(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="from_step"):
        tritontui.start(tmp_path / "t.msgpack", from_step=-1)
    with pytest.raises(ValueError, match=r"to_step \(3\) comes before from_step \(4\)"):
        tritontui.start(tmp_path / "t.msgpack", from_step=4, to_step=3)
    os.environ["TRITONTUI_TO_STEP"] = "four"
    try:
        with pytest.raises(ValueError, match="TRITONTUI_TO_STEP"):
            tritontui.start(tmp_path / "t.msgpack")
    finally:
        del os.environ["TRITONTUI_TO_STEP"]
    assert not tritontui.is_recording()


def _check_steps_parting(
    tmp_path: Path, cache: Path, program: str | Path, env: dict[str, str], ranks: int = 0
) -> tuple[dict, str]:
    """``check --steps --no-values --json`` of ``program`` (under torchrun
    on ``ranks`` ranks when given) with ``env`` set, whose runs must part:
    its verdict and what it said on stderr."""
    os.environ.update(env)
    try:
        proc = check(tmp_path, cache, program, "--steps", "--no-values", "--json", ranks=ranks)
    finally:
        for name in env:
            del os.environ[name]
    assert proc.returncode == 1, proc.stdout + proc.stderr
    verdict = json.loads(proc.stdout)
    assert verdict["verdict"] == "nondeterministic"
    return verdict, proc.stderr


def test_check_steps_names_the_step_and_the_draw(tmp_path: Path, inductor_cache: Path) -> None:
    verdict, said = _check_steps_parting(tmp_path, inductor_cache, LONG_STEPS, {"NOISY": "4"})
    steps = verdict["steps"]
    assert steps["first_difference_step"] == 4 and steps["window"] == [3, 4], steps
    assert steps["said"][0].startswith("fingerprints first differ at step 4 (graph call")
    first = verdict["comparisons"][0]["report"]["first_divergence"]
    assert (first["kernel"], first["kind"], first["step"]) == (
        "aten::randn.generator",
        "divergent-input",
        4,
    ), first
    runs = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert runs == [
        "fingerprints0.msgpack",
        "fingerprints1.msgpack",
        "run0.msgpack",
        "run1.msgpack",
    ]
    assert "recording steps 3 to 4 in full" in said


def test_check_steps_passes_a_deterministic_loop(tmp_path: Path, inductor_cache: Path) -> None:
    proc = check(tmp_path, inductor_cache, LONG_STEPS, "--steps")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("deterministic: 2 runs of"), proc.stdout
    assert "over 6 steps alike" in proc.stdout, proc.stdout
    assert not (tmp_path / "runs" / "run0.msgpack").exists()


def test_check_steps_names_the_rank_and_the_step_of_a_torchrun_job(
    tmp_path: Path, inductor_cache: Path
) -> None:
    _check_steps_of_a_torchrun_job(tmp_path, inductor_cache, "cpu")


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
@pytest.mark.gpu
def test_check_steps_names_the_rank_and_the_step_on_two_gpus(
    tmp_path: Path, inductor_cache: Path
) -> None:
    _check_steps_of_a_torchrun_job(tmp_path, inductor_cache, "cuda")


def _check_steps_of_a_torchrun_job(tmp_path: Path, inductor_cache: Path, device: str) -> None:
    # Rank 1's batches pick up clock-seeded noise from step 5: its forward
    # graph call parts there first; rank 0 sees it only through the
    # gradients' all-reduce (fingerprinted though the recording started
    # before the program joined its process group).
    env = {"NOISY": "5", "DEVICE": device}
    verdict, _ = _check_steps_parting(tmp_path, inductor_cache, "ddp_steps.py", env, ranks=2)
    steps = verdict["steps"]
    assert steps["first_difference_step"] == 5 and steps["window"] == [4, 5], steps
    assert steps["said"][0].startswith("rank 1: fingerprints first differ at step 5 (graph call")
    runs = tmp_path / "runs"
    assert sorted(p.name for p in (runs / "run0").iterdir()) == [
        "run0-rank0.msgpack",
        "run0-rank1.msgpack",
    ]
    ranks = verdict["comparisons"][0]["ranks"]
    cause = ranks["earliest_cause"]
    assert cause["rank"] == 1, cause
    assert (cause["divergence"]["kernel"], cause["divergence"]["step"]) == (
        "aten::randn.generator",
        5,
    )
    rank0 = ranks["ranks"][0]["report"]
    assert rank0["first_divergence"]["kind"] == "collective", rank0["first_divergence"]
    fingerprinted = dump(runs / "fingerprints0" / "fingerprints0-rank0.msgpack")
    collectives = [
        r for r in fingerprinted if r.get("type") == "launch" and r["kernel"] == "c10d::allreduce_"
    ]
    assert collectives and all(r["fingerprint"] for r in collectives), len(fingerprinted)
    # The runs' folders compared by diff: the earliest cause with its step.
    diff = subprocess.run(
        [binary(), "diff", str(runs / "run0"), str(runs / "run1")], capture_output=True, text=True
    )
    assert "earliest cause: rank 1  step 5, A#" in diff.stdout, diff.stdout + diff.stderr


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.gpu
def test_check_steps_names_the_step_on_the_device(tmp_path: Path, inductor_cache: Path) -> None:
    env = {"NOISY": "3", "DEVICE": "cuda"}
    verdict, _ = _check_steps_parting(tmp_path, inductor_cache, LONG_STEPS, env)
    assert verdict["steps"]["window"] == [2, 3], verdict["steps"]
    first = verdict["comparisons"][0]["report"]["first_divergence"]
    assert first["step"] == 3 and first["kernel"] == "aten::randn.generator", first

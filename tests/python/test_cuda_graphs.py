"""CUDA graphs recorded as they run: captures written once, every replay
hashed and expanded into its launches. Skipped without CUDA."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import diff, dump

pytestmark = pytest.mark.gpu


def replayed_launches(records: list[dict]) -> list[dict]:
    return [r for r in records if r["type"] == "launch" and r["replay"] is not None]


def tensors(launch: dict) -> list[dict]:
    return [a for a in launch["args"] if "dtype" in a]


def test_a_hand_written_capture_is_recorded_once_and_hashed_at_every_replay(
    run_program, tmp_path: Path
) -> None:
    trace = tmp_path / "t.msgpack"
    out = run_program("cuda_graph_capture.py", str(trace)).stdout
    # What the program read after each replay, hashed by tritontui.
    read = {int(n): h for n, h in re.findall(r"replay (\d) ([0-9a-f]{16})", out)}
    assert sorted(read) == [0, 1, 2], out
    records = dump(trace)
    graphs = [r for r in records if r["type"] == "cuda_graph"]
    assert [(g["launches"], g["missing"]) for g in graphs] == [(2, "")], graphs
    replays = [r for r in records if r["type"] == "replay"]
    assert [(r["n"], r["launches"], r["hashed"]) for r in replays] == [
        (n, 2, True) for n in range(3)
    ]
    launched = replayed_launches(records)
    kernels = [(r["kernel"], r["replay"]["n"]) for r in launched]
    assert kernels == [(k, n) for n in range(3) for k in ("triton_poi_fused_mul_sin_0", "aten::mm")]
    for launch in launched:
        assert all(a["post"] is not None for a in tensors(launch)), launch
        if launch["kernel"] == "aten::mm":
            # The matmul's output after replay n is what the program read.
            result = tensors(launch)[-1]
            assert result["post"] == f"0x{read[launch['replay']['n']]}", (launch, read)
    # Each replay's Triton kernel read the input the program copied in.
    copies = [r for r in records if r["type"] == "launch" and r["kernel"] == "aten::copy_"]
    sins = [r for r in launched if r["kernel"].startswith("triton_")]
    assert [tensors(c)[0]["post"] for c in copies[-3:]] == [tensors(s)[0]["pre"] for s in sins]


def run_trees(
    run_program, tmp_path: Path, name: str, *args: str, env: dict[str, str] | None = None
) -> tuple[Path, int]:
    """Records the graph tree training; returns its trace and the replays
    torch made."""
    trace, replays, _ = run_trees_beside(run_program, tmp_path, name, *args, env=env)
    return trace, replays


def run_trees_beside(
    run_program, tmp_path: Path, name: str, *args: str, env: dict[str, str] | None = None
) -> tuple[Path, int, int]:
    """``run_trees``, with the hash kernels the recorder ran beside the
    graphs' launches."""
    trace = tmp_path / f"{name}.msgpack"
    out = run_program("cuda_graph_trees.py", str(trace), *args, env=env).stdout
    replays = int(re.search(r"replays (\d+)", out).group(1))
    beside = int(re.search(r"hash kernels beside (\d+)", out).group(1))
    return trace, replays, beside


def check_every_replay_recorded(trace: Path, replays: int) -> list[dict]:
    records = dump(trace)
    assert records[0]["options"]["cuda_graphs_disabled"] is False
    recorded = [r for r in records if r["type"] == "replay"]
    assert replays > 0 and len(recorded) == replays, (replays, recorded)
    assert all(r["hashed"] for r in recorded), recorded
    assert not [r for r in records if r["type"] == "gap"]
    for launch in replayed_launches(records):
        assert all(a["post"] is not None for a in tensors(launch) if not a["allocated"]), launch
    return records


def test_graph_trees_keep_their_graphs_and_every_replay_is_recorded(
    run_program, tmp_path: Path
) -> None:
    # The first run compiles; the two compared find the compiled code
    # in the cache alike.
    run_trees(run_program, tmp_path, "cold")
    a, replays_a, beside = run_trees_beside(run_program, tmp_path, "a")
    b, replays_b = run_trees(run_program, tmp_path, "b")
    records = check_every_replay_recorded(a, replays_a)
    check_every_replay_recorded(b, replays_b)
    _, report = diff(a, b)
    assert report["verdict"] == "identical", report["root_causes"]
    assert report["cuda_graph_replays"] == {"a": replays_a, "b": replays_b}
    # The hashes after a captured launch wait for the next launch's table
    # kernel, past the buffers the wrapper hands out between launches: at
    # most one hash kernel per launch, one for the call's inputs and one
    # after the last launch.
    graphs = [g for g in records if g["type"] == "cuda_graph" and g["launches"]]
    assert graphs, records
    for graph in graphs:
        assert 0 < graph["hash_kernels"] <= graph["launches"] + 2, graph
    # Those that read no bytes the next launch writes run beside it, and
    # give the same hashes (the two runs compare identical above).
    assert 0 < beside < sum(g["hash_kernels"] for g in graphs), (beside, graphs)


def test_an_atomic_in_a_graph_is_found_in_its_replays_with_the_graph_s_other_launches_equal(
    run_program, tmp_path: Path
) -> None:
    run_trees(run_program, tmp_path, "cold", "--atomic")
    a, replays_a = run_trees(run_program, tmp_path, "a", "--atomic")
    b, replays_b = run_trees(run_program, tmp_path, "b", "--atomic")
    check_every_replay_recorded(b, replays_b)
    check_every_replay_recorded(a, replays_a)
    _, report = diff(a, b)
    assert report["verdict"] == "divergent"
    assert "index_add" in report["first_divergence"]["kernel"], report["first_divergence"]
    in_replays = [
        d
        for d in report["root_causes"]
        if "index_add" in d["kernel"] and d["in_replay"]["a"] and d["in_replay"]["b"]
    ]
    assert in_replays, report["root_causes"]
    for root in in_replays:
        assert root["kind"] == "nondeterministic-kernel", root
        same = root["in_replay"]["a"]
        # Nothing of the same replay diverged before the index_add.
        before = [
            d
            for d in report["divergences"]
            if d["in_replay"]["a"] == same and d["a_index"] < root["a_index"]
        ]
        assert not before, before


def test_a_graphed_run_compares_with_an_ungraphed_one(run_program, tmp_path: Path) -> None:
    run_trees(run_program, tmp_path, "cold")
    run_trees(run_program, tmp_path, "cold_ungraphed", "--ungraphed")
    graphed, replays = run_trees(run_program, tmp_path, "graphed")
    ungraphed, none = run_trees(run_program, tmp_path, "ungraphed", "--ungraphed")
    assert none == 0
    _, report = diff(graphed, ungraphed)
    assert report["cuda_graph_replays"] == {"a": replays, "b": 0}
    # The same program's results, bit for bit: no difference reaches them.
    assert report["results"]["differ"] == 0, report["result_differences"]
    assert report["verdict"] in ("identical", "benign"), report["root_causes"]


def test_a_graphed_backward_s_saved_activations_die_in_it_as_when_it_was_captured(
    run_program, tmp_path: Path
) -> None:
    # The backward graph's inputs hold 64 MB activations that die during
    # its call: the tree fails the program at a replay where anything
    # kept them alive, as input hashes running beside the call would.
    def run(*flags: str) -> dict[str, str]:
        out = run_program("cuda_graph_wide_training.py", "t.msgpack", *flags).stdout
        return dict(re.findall(r"^(input hash forks|replays|results) (\w+)$", out, re.M))

    unrecorded = run("--unrecorded")
    recorded = run()
    assert recorded["results"] == unrecorded["results"]
    assert recorded["replays"] == unrecorded["replays"] != "0", (recorded, unrecorded)
    # The forward's input (64 MB, the user's) is hashed beside each of its
    # five calls; the backward's, holding the tree's outputs, never.
    assert recorded["input hash forks"] == "5", recorded
    check_every_replay_recorded(tmp_path / "t.msgpack", int(recorded["replays"]))


def run_kept(run_program, tmp_path: Path, mode: str) -> tuple[Path, str]:
    """Records the kept-output program in ``mode``; returns its trace and
    the hash of what it stacked."""
    trace = tmp_path / f"{mode}.msgpack"
    out = run_program("cuda_graph_kept_output.py", str(trace), mode).stdout
    return trace, re.search(r"stacked ([0-9a-f]{16})", out).group(1)


def test_an_output_read_after_the_next_replay_overwrote_it_is_said(
    run_program, tmp_path: Path
) -> None:
    graphed, kept = run_kept(run_program, tmp_path, "graphed")
    cloned, fixed = run_kept(run_program, tmp_path, "cloned")
    ungraphed, fresh = run_kept(run_program, tmp_path, "ungraphed")
    # The truth, from the program's own results: the kept output is wrong.
    assert kept != fresh and fixed == fresh
    _, report = diff(graphed, ungraphed)
    assert report["verdict"] == "divergent"
    first = report["first_divergence"]
    assert (first["kernel"], first["kind"]) == ("aten::stack", "divergent-input"), first
    # The graph's allocations and input copies run B lacks reach nothing.
    reaching = [r["kernel"] for r in report["root_causes"] if r["impact"] == "reaches-results"]
    assert reaching == ["aten::stack"], report["root_causes"]
    overwritten = first["overwritten"]
    assert overwritten["run"] == "a", first
    assert (overwritten["by_replay"]["replay"], overwritten["replaced_replay"]["replay"]) == (
        2,
        0,
    ), first
    assert "had overwritten what launch" in first["detail"], first["detail"]
    assert "clone an output that is read after the next replay" in first["detail"], first["detail"]
    # Cloned, the program's results agree with the ungraphed run's.
    _, report = diff(cloned, ungraphed)
    assert report["results"]["differ"] == 0, report["result_differences"]
    assert report["verdict"] in ("identical", "benign"), report["root_causes"]


def test_an_output_a_graph_sharing_its_pool_overwrote_is_said(run_program, tmp_path: Path) -> None:
    runs = {}
    for mode in ("graphed", "ungraphed"):
        trace = tmp_path / f"{mode}.msgpack"
        out = run_program("cuda_graph_shared_pool.py", str(trace), mode).stdout
        runs[mode] = (trace, out)
    graphed, out = runs["graphed"]
    # The allocator gave graph 2's output graph 1's freed intermediate.
    assert "reused True" in out, out
    stacked = {m: re.search(r"stacked ([0-9a-f]{16})", o).group(1) for m, (_, o) in runs.items()}
    assert stacked["graphed"] != stacked["ungraphed"], stacked
    pools = [r["pool"] for r in dump(graphed) if r["type"] == "cuda_graph"]
    assert len(pools) == 2 and pools[0] == pools[1] and pools[0] is not None, pools
    _, report = diff(graphed, runs["ungraphed"][0])
    first = report["first_divergence"]
    assert first["kernel"] == "aten::stack", first
    overwritten = first["overwritten"]
    assert overwritten["shared_pool"], first
    assert (overwritten["by_replay"]["graph"], overwritten["replaced_replay"]["graph"]) == (1, 2)
    assert "were captured from one memory pool" in first["detail"], first["detail"]
    # The kept output is explained by the same overwrite; the capture's
    # own allocations and fills reach nothing.
    reaching = [r["kernel"] for r in report["root_causes"] if r["impact"] == "reaches-results"]
    assert reaching == ["aten::stack"], report["root_causes"]


def test_a_captured_hash_shared_from_the_data_flow_equals_the_hash_it_spares(
    run_program, tmp_path: Path
) -> None:
    run_trees(run_program, tmp_path, "cold")
    shared, replays = run_trees(run_program, tmp_path, "shared")
    every, _ = run_trees(run_program, tmp_path, "every", env={"TRITONTUI_HASH_EVERY_INPUT": "1"})
    check_every_replay_recorded(shared, replays)
    tables = {
        name: [(g["slots"], g["bytes"]) for g in dump(trace) if g["type"] == "cuda_graph"]
        for name, trace in (("shared", shared), ("every", every))
    }
    # Inside the graph tree's captures, a hash before a launch takes the
    # table slot of the hash after the launch that wrote the view last:
    # fewer slots, fewer bytes read at each replay...
    assert len(tables["shared"]) == len(tables["every"]) > 0, tables
    slots, read = (sum(column) for column in zip(*tables["shared"], strict=True))
    every_slots, every_read = (sum(column) for column in zip(*tables["every"], strict=True))
    assert slots < every_slots and 0 < read < every_read, tables
    # ...and the same hashes at every replay as hashing each input gives.
    _, report = diff(shared, every)
    assert report["verdict"] == "identical", report["root_causes"]


def test_random_ops_captured_into_a_graph_are_recorded_with_their_generator(
    run_program, tmp_path: Path
) -> None:
    traces, outputs = [], []
    for name in ("a", "b"):
        trace = tmp_path / f"{name}.msgpack"
        out = run_program("cuda_graph_random.py", str(trace)).stdout
        traces.append(trace)
        outputs.append(re.findall(r"replay \d ([0-9a-f]{16})", out))
    # The same seed draws the same numbers at each replay; replays differ.
    assert outputs[0] == outputs[1] and len(set(outputs[0])) == 3, outputs
    records = dump(traces[0])
    assert not [r for r in records if r["type"] == "gap"], records
    launched = replayed_launches(records)
    kernels = {r["kernel"] for r in launched}
    assert any("efficient_attention" in k for k in kernels), kernels
    assert any("dropout" in k for k in kernels), kernels
    generators = [
        a["value"] for r in launched for a in r["args"] if "generator" in str(a.get("value"))
    ]
    assert generators and all("offset=per-replay" in g for g in generators), generators
    _, report = diff(*traces)
    assert report["verdict"] == "identical", report["root_causes"]

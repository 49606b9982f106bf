"""Multi-process runs: under torchrun every rank records into its own
trace, which says which rank it is; the launcher records nothing; a
collective is recorded with what it left in its tensors; two runs are
compared rank by rank, the earliest cause named across ranks; the ranks of
one run are checked against each other through their collectives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import PROGRAMS, TORCHRUN, binary, dump, run_ok


def _assert_rank_traces(traces: list[Path], stdout: str) -> None:
    """One trace per rank, each naming its rank and holding its launches,
    its all-reduce recorded with the hash of the reduced tensor (which the
    program printed)."""
    assert len(traces) == 2, traces
    printed = [
        line.split()
        for line in stdout.splitlines()
        if line.startswith(("allreduced", "functional", "received"))
    ]
    reduced = {int(r): v for what, r, v in printed if what == "allreduced"}
    functional = {int(r): v for what, r, v in printed if what == "functional"}
    received = {int(r): v for what, r, v in printed if what == "received"}
    received_any = {int(r): v for what, r, v in printed if what == "received_any"}
    assert sorted(reduced) == sorted(functional) == [0, 1], stdout
    for rank, trace in enumerate(traces):
        records = dump(trace)
        header = records[0]
        assert header["distributed"]["rank"] == rank, header
        assert header["distributed"]["world_size"] == 2
        assert header["distributed"]["local_rank"] == rank
        assert header["distributed"]["run_id"]
        assert header["version"] >= [1, 8]
        groups = [
            (r["name"], r["desc"], r["backend"], r["ranks"])
            for r in records
            if r["type"] == "process_group"
        ]
        assert groups == [("0", "default_pg", "gloo", [0, 1]), ("1", "spare", "gloo", [0, 1])]
        kernels = {r["kernel"] for r in records if r["type"] == "launch"}
        assert any(k.startswith("cpp_fused") for k in kernels), kernels
        # Point-to-point: each send recorded when called (reading what
        # the other rank printed it received), each receive where the
        # program waited for it, with what it printed.
        launches = [r for r in records if r["type"] == "launch"]
        sends = [r["args"][0] for r in launches if r["kernel"] == "c10d::send"]
        receives = [r["args"][0] for r in launches if r["kernel"] == "c10d::recv_"]
        assert len(sends) == 2 - rank and len(receives) == 1, kernels
        assert not sends[0]["written"] and sends[0]["pre"] == sends[0]["post"], sends
        assert int(sends[0]["pre"], 16) == int(received[1 - rank], 16)
        assert receives[0]["written"] and receives[0]["pre"] is None, receives
        assert int(receives[0]["post"], 16) == int(received[rank], 16)
        any_source = [r for r in launches if r["kernel"] == "c10d::recv_any_source_"]
        if rank == 1:
            (from_any,) = any_source
            assert int(from_any["args"][0]["post"], 16) == int(received_any[1], 16)
            assert [a.get("value") for a in from_any["args"][2:]] == [0, 0], from_any
        else:
            assert not any_source
        (allreduce,) = [
            r for r in records if r["type"] == "launch" and r["kernel"] == "c10d::allreduce_"
        ]
        tensor = allreduce["args"][0]
        assert tensor["written"] and tensor["pre"] != tensor["post"], tensor
        assert int(tensor["post"], 16) == int(reduced[rank], 16), (tensor, reduced)
        # A functional collective's result, hashed once it is there.
        (all_reduce,) = [
            r
            for r in records
            if r["type"] == "launch" and r["kernel"] == "_c10d_functional::all_reduce"
        ]
        result = next(a for a in all_reduce["args"] if a["name"] == "result")
        assert int(result["post"], 16) == int(functional[rank], 16), (result, functional)


def test_every_torchrun_rank_records_its_own_trace(tmp_path: Path, inductor_cache: Path) -> None:
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache)}
    env.pop("TRITONTUI_RECORD", None)
    program = str(PROGRAMS / "ranks.py")
    # Through the CLI, each rank into a folder by its rank.
    proc = run_ok(
        [binary(), "record", "-o", "run0/rank{rank}.msgpack", "--", *TORCHRUN, program],
        tmp_path,
        env,
    )
    assert "the launcher itself is not recorded" in proc.stderr
    run0 = tmp_path / "run0"
    assert sorted(p.name for p in run0.iterdir()) == ["rank0.msgpack", "rank1.msgpack"]
    _assert_rank_traces([run0 / "rank0.msgpack", run0 / "rank1.msgpack"], proc.stdout)
    # Without {rank} in the path, each rank's trace gets its rank added.
    # This run gives rank 1 other data.
    variant = {**env, "TRITONTUI_RECORD": "run1/plain.msgpack", "RANKS_VARIANT": "1"}
    proc = run_ok([*TORCHRUN, program], tmp_path, variant)
    run1 = tmp_path / "run1"
    assert not (run1 / "plain.msgpack").exists()
    _assert_rank_traces([run1 / "plain-rank0.msgpack", run1 / "plain-rank1.msgpack"], proc.stdout)

    # Rank by rank: rank 0 diverges through the all-reduce, rank 1 where
    # its own data is made from another seed (the first random op, its
    # weights' initialisation), the earliest cause.
    same = subprocess.run([binary(), "diff", "run0", "run0"], cwd=tmp_path, capture_output=True)
    assert same.returncode == 0, same.stderr
    differ = subprocess.run(
        [binary(), "diff", "--json", "run0", "run1"], cwd=tmp_path, capture_output=True, text=True
    )
    assert differ.returncode == 1, differ.stderr
    report = json.loads(differ.stdout)
    assert [r["rank"] for r in report["ranks"]] == [0, 1]
    rank0, rank1 = (r["report"]["first_divergence"] for r in report["ranks"])
    assert (rank0["kernel"], rank0["kind"]) == ("c10d::allreduce_", "collective")
    assert rank1["kernel"] in ("aten::uniform_", "aten::randn"), rank1
    assert rank1["kind"] != "collective", rank1
    assert report["earliest_cause"]["rank"] == 1
    assert report["earliest_cause"]["divergence"]["kernel"] == rank1["kernel"]
    text = subprocess.run(
        [binary(), "diff", "run0", "run1"], cwd=tmp_path, capture_output=True, text=True
    ).stdout
    assert "earliest cause: rank 1" in text, text

    # The ranks of one run against each other: both all-reduces (eager and
    # functional) left the same bytes on both ranks of the default group.
    agree = subprocess.run(
        [binary(), "ranks", "--json", "run0"], cwd=tmp_path, capture_output=True, text=True
    )
    assert agree.returncode == 0, agree.stdout + agree.stderr
    check = json.loads(agree.stdout)
    assert check["ranks"] == [0, 1]
    assert [(g["name"], g["backend"], g["members"], g["collectives"]) for g in check["groups"]] == [
        ("0", "gloo", [0, 1], 3),
        ("1", "gloo", [0, 1], 0),
    ]
    text = subprocess.run(
        [binary(), "ranks", "run0"], cwd=tmp_path, capture_output=True, text=True
    ).stdout
    assert "process group 1 (gloo): ranks 0-1, no collective" in text, text
    # Both all-reduces (eager and functional) and the all-gather, whose
    # pieces each hold what their rank put in.
    assert check["results_compared"] == 3, check
    assert check["pieces_compared"] == 1, check
    # The exchange and the receive from any source, each send's bytes
    # found on its receiver.
    assert (check["messages"], check["messages_compared"]) == (3, 3), check
    # Rank 1 all-reducing with MAX where rank 0 sums: a desynchronised
    # rank, named by the op's reduce op.
    mismatched = {**env, "TRITONTUI_RECORD": "run2/rank{rank}.msgpack", "RANKS_VARIANT": "max"}
    run_ok([*TORCHRUN, program], tmp_path, mismatched)
    found = subprocess.run(
        [binary(), "ranks", "--json", "run2"], cwd=tmp_path, capture_output=True, text=True
    )
    assert found.returncode == 1, found.stdout + found.stderr
    mismatch = json.loads(found.stdout)["first_sequence_mismatch"]
    assert (mismatch["op"], mismatch["what"], mismatch["index"]) == (
        "c10d::allreduce_",
        "reduce op",
        0,
    )
    assert [r["value"] for r in mismatch["ranks"]] == ["SUM", "MAX"]


def test_ranks_spawned_by_torch_multiprocessing_record_their_own_traces(
    tmp_path: Path, inductor_cache: Path
) -> None:
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache)}
    env.pop("TRITONTUI_RECORD", None)
    program = str(PROGRAMS / "spawned_ranks.py")
    proc = run_ok(
        [binary(), "record", "-o", "run0/rank{rank}.msgpack", "--", sys.executable, program],
        tmp_path,
        env,
    )
    # The launcher ran no op: it leaves no trace.
    assert "recorded no launch, so it has no trace" in proc.stderr, proc.stderr
    run0 = tmp_path / "run0"
    assert sorted(p.name for p in run0.iterdir()) == ["rank0.msgpack", "rank1.msgpack"]
    run_ids = set()
    for rank in (0, 1):
        records = dump(run0 / f"rank{rank}.msgpack")
        place = records[0]["distributed"]
        assert (place["rank"], place["world_size"], place["local_rank"]) == (rank, 2, rank)
        run_ids.add(place["run_id"])
        kernels = [r["kernel"] for r in records if r["type"] == "launch"]
        assert "c10d::allreduce_" in kernels, kernels
        assert sum(k.startswith("cpp_fused") for k in kernels) == 2, kernels
    assert len(run_ids) == 1, run_ids
    agree = subprocess.run(
        [binary(), "ranks", "run0"], cwd=tmp_path, capture_output=True, text=True
    )
    assert agree.returncode == 0, agree.stdout + agree.stderr

    # A launcher that runs ops of its own keeps them out of the ranks' way.
    launcher = {**env, "TRITONTUI_RECORD": "run1/rank{rank}.msgpack", "LAUNCHER_WORK": "1"}
    proc = run_ok([sys.executable, program], tmp_path, launcher)
    run1 = tmp_path / "run1"
    assert sorted(p.name for p in run1.iterdir()) == [
        "rank0.msgpack",
        "rank0.msgpack.launcher",
        "rank1.msgpack",
    ]
    kernels = [r["kernel"] for r in dump(run1 / "rank0.msgpack.launcher") if r["type"] == "launch"]
    assert "aten::add_.Tensor" in kernels or "aten::add_.Scalar" in kernels, kernels
    # Ranks started as multiprocessing's processes: the launcher records
    # on, its trace moved out of rank 0's way when rank 0 starts.
    plain = {
        **launcher,
        "TRITONTUI_RECORD": "run2/rank{rank}.msgpack",
        "PLAIN_MULTIPROCESSING": "1",
    }
    run_ok([sys.executable, program], tmp_path, plain)
    run2 = tmp_path / "run2"
    assert sorted(p.name for p in run2.iterdir()) == [
        "rank0.msgpack",
        "rank0.msgpack.launcher",
        "rank1.msgpack",
    ]
    launcher_records = dump(run2 / "rank0.msgpack.launcher")
    assert launcher_records[-1]["complete"], launcher_records[-1]
    for rank in (0, 1):
        place = dump(run2 / f"rank{rank}.msgpack")[0]["distributed"]
        assert (place["rank"], place["local_rank"]) == (rank, rank), place
    # The same ranks on the same data: no divergence on either.
    for run in ("run1", "run2"):
        same = subprocess.run(
            [binary(), "diff", "run0", run], cwd=tmp_path, capture_output=True, text=True
        )
        assert same.returncode == 0, same.stdout + same.stderr


def test_a_collective_inside_a_compiled_graph_is_recorded_and_checked(
    tmp_path: Path, inductor_cache: Path
) -> None:
    env = {
        **os.environ,
        "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache),
        "TRITONTUI_RECORD": "run/rank{rank}.msgpack",
    }
    run_ok([*TORCHRUN, str(PROGRAMS / "compiled_collective.py")], tmp_path, env)
    for rank in (0, 1):
        launches = [
            r for r in dump(tmp_path / "run" / f"rank{rank}.msgpack") if r["type"] == "launch"
        ]
        kernels = [r["kernel"] for r in launches]
        at = kernels.index("_c10d_functional::all_reduce_")
        # Between the graph's kernels, the collective and its wait.
        assert kernels[at - 1].startswith("cpp_fused") and kernels[at + 1] == (
            "_c10d_functional::wait_tensor"
        ), kernels
        reduced = launches[at]["args"][0]
        assert reduced["pre"] != reduced["post"] and reduced["post"] is not None, reduced
    check = subprocess.run(
        [binary(), "ranks", "--json", "run"], cwd=tmp_path, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    report = json.loads(check.stdout)
    assert report["results_compared"] == 1, report
    # The collective names its group by name alone; the group's record
    # gives its backend and members.
    assert [(g["name"], g["backend"], g["members"]) for g in report["groups"]] == [
        ("0", "gloo", [0, 1])
    ]

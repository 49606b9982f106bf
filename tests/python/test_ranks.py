"""Multi-process runs: under torchrun every rank records into its own
trace, which says which rank it is; the launcher records nothing; a
collective is recorded with what it left in its tensors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import PROGRAMS, binary, dump

TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _assert_rank_traces(traces: list[Path], stdout: str) -> None:
    """One trace per rank, each naming its rank and holding its launches,
    its all-reduce recorded with the hash of the reduced tensor (which the
    program printed)."""
    assert len(traces) == 2, traces
    printed = [
        line.split()
        for line in stdout.splitlines()
        if line.startswith(("allreduced", "functional"))
    ]
    reduced = {int(r): v for what, r, v in printed if what == "allreduced"}
    functional = {int(r): v for what, r, v in printed if what == "functional"}
    assert sorted(reduced) == sorted(functional) == [0, 1], stdout
    for rank, trace in enumerate(traces):
        records = dump(trace)
        header = records[0]
        assert header["distributed"]["rank"] == rank, header
        assert header["distributed"]["world_size"] == 2
        assert header["distributed"]["local_rank"] == rank
        assert header["distributed"]["run_id"]
        assert header["version"] >= [1, 6]
        kernels = {r["kernel"] for r in records if r["type"] == "launch"}
        assert any(k.startswith("cpp_fused") for k in kernels), kernels
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
    proc = _run(
        [binary(), "record", "-o", "run0/rank{rank}.msgpack", "--", *TORCHRUN, program],
        tmp_path,
        env,
    )
    assert "the launcher itself is not recorded" in proc.stderr
    run0 = tmp_path / "run0"
    assert sorted(p.name for p in run0.iterdir()) == ["rank0.msgpack", "rank1.msgpack"]
    _assert_rank_traces([run0 / "rank0.msgpack", run0 / "rank1.msgpack"], proc.stdout)
    # Without {rank} in the path, each rank's trace gets its rank added.
    proc = _run([*TORCHRUN, program], tmp_path, {**env, "TRITONTUI_RECORD": "plain.msgpack"})
    assert not (tmp_path / "plain.msgpack").exists()
    plain = [tmp_path / "plain-rank0.msgpack", tmp_path / "plain-rank1.msgpack"]
    _assert_rank_traces(plain, proc.stdout)

"""Multi-process runs: under torchrun every rank records into its own
trace, which says which rank it is; the launcher records nothing."""

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


def _assert_rank_traces(traces: list[Path]) -> None:
    """One trace per rank, each naming its rank and holding its launches."""
    assert len(traces) == 2, traces
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
    _assert_rank_traces([run0 / "rank0.msgpack", run0 / "rank1.msgpack"])
    # Without {rank} in the path, each rank's trace gets its rank added.
    _run([*TORCHRUN, program], tmp_path, {**env, "TRITONTUI_RECORD": "plain.msgpack"})
    assert not (tmp_path / "plain.msgpack").exists()
    _assert_rank_traces([tmp_path / "plain-rank0.msgpack", tmp_path / "plain-rank1.msgpack"])

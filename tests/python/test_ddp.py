"""Data-parallel training under torchrun: DDP's gradient buckets are
all-reduced by its reducer (C++, inside backward), outside any compiled
graph; every rank's trace must hold them with their hashes, the ranks of
one run must agree through them, and a rank given other data must be
named as the earliest cause across ranks. On the CPU with gloo here; the
same program on a GPU (two ranks sharing one with gloo, or NCCL on two)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PROGRAMS, TORCHRUN, binary, dump, run_ok


def _record(
    run: str, cwd: Path, env: dict[str, str], variant: bool = False, program: str = "ddp.py"
) -> str:
    env = {**env, "TRITONTUI_RECORD": f"{run}/rank{{rank}}.msgpack"}
    if variant:
        env["RANKS_VARIANT"] = "1"
    return run_ok([*TORCHRUN, str(PROGRAMS / program)], cwd, env).stdout


def _tritontui(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([binary(), *args], cwd=cwd, capture_output=True, text=True)


def _gpu_env(inductor_cache: Path) -> dict[str, str]:
    """The environment of ranks on GPUs: NCCL where each rank has a GPU of
    its own; two ranks sharing one GPU need gloo (NCCL refuses a GPU shared
    by ranks)."""
    import torch

    backend = "nccl" if torch.cuda.device_count() >= 2 else "gloo"
    return {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache), "DDP_BACKEND": backend}


def _cpu_env(inductor_cache: Path) -> dict[str, str]:
    """The environment of ranks on the CPU (gloo)."""
    return {
        **os.environ,
        "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache),
        "CUDA_VISIBLE_DEVICES": "",
    }


def _compare_runs(
    tmp_path: Path, env: dict[str, str], device: str, program: str = "ddp.py"
) -> tuple[dict, dict]:
    """Records ``program``'s run0, again (the same data) and run1 (rank 1
    on other data);
    checks what holds of any data-parallel training: run0's ranks agree,
    run0 and again are identical on every rank, run1 diverges with rank 1
    the earliest cause, and rank 0 (equal data) only through collectives.
    Returns ``ranks --json`` of run0 and rank 0's report of run0 against
    run1."""
    if device == "cuda":
        # The recorded runs load the kernels and their autotuned configs
        # from the cache this run fills: otherwise each rank autotunes, and
        # a config chosen differently in two runs is (rightly) a divergence
        # of its own.
        _record("warm", tmp_path, env, program=program)
    _record("run0", tmp_path, env, program=program)
    _record("again", tmp_path, env, program=program)
    _record("run1", tmp_path, env, variant=True, program=program)
    for rank in (0, 1):
        launches = [
            r for r in dump(tmp_path / "run0" / f"rank{rank}.msgpack") if r["type"] == "launch"
        ]
        assert any(r["device"] >= 0 for r in launches) == (device == "cuda")
    agree = _tritontui("ranks", "--json", "run0", cwd=tmp_path)
    assert agree.returncode == 0, agree.stdout + agree.stderr
    # Two runs on the same data: no false alarm on any rank.
    same = _tritontui("diff", "run0", "again", cwd=tmp_path)
    assert same.returncode == 0, same.stdout + same.stderr
    differ = _tritontui("diff", "--json", "run0", "run1", cwd=tmp_path)
    assert differ.returncode == 1, differ.stdout + differ.stderr
    report = json.loads(differ.stdout)
    assert report["earliest_cause"]["rank"] == 1, report["earliest_cause"]
    rank0 = report["ranks"][0]["report"]
    # Rank 0 ran on equal data: each of its root causes is a collective
    # (for FSDP2: no optimizer update left unhashed, no copy out of gloo's
    # buffer, no partly written all-gather buffer taken for a read of
    # garbage).
    roots = rank0["root_causes"]
    assert roots and {r["kind"] for r in roots} == {"collective"}, roots
    return json.loads(agree.stdout), rank0


def _check_ddp(tmp_path: Path, env: dict[str, str], device: str) -> None:
    agree, rank0 = _compare_runs(tmp_path, env, device)
    assert agree["results_compared"] >= 6, agree
    for rank in (0, 1):
        records = dump(tmp_path / "run0" / f"rank{rank}.msgpack")
        launches = [r for r in records if r["type"] == "launch"]
        buckets = [r for r in launches if r["kernel"] == "c10d::allreduce_"]
        # Three steps, several buckets each.
        assert len(buckets) >= 6, [r["kernel"] for r in launches][:80]
        for bucket in buckets:
            tensor = bucket["args"][0]
            assert tensor["post"] is not None and tensor["written"], bucket
    first = rank0["first_divergence"]
    assert (first["kernel"], first["kind"]) == ("c10d::allreduce_", "collective"), first


def test_ddp_buckets_are_recorded_on_every_rank(tmp_path: Path, inductor_cache: Path) -> None:
    _check_ddp(tmp_path, _cpu_env(inductor_cache), "cpu")


def test_compiled_ddp_ranks_agree_and_another_rank_s_data_is_the_earliest_cause(
    tmp_path: Path, inductor_cache: Path
) -> None:
    # torch.compile(DDP(model)), whose recording stopped on an internal
    # error before its first all-reduce.
    agree, rank0 = _compare_runs(tmp_path, _cpu_env(inductor_cache), "cpu", "compiled_ddp.py")
    assert agree["results_compared"] >= 6, agree
    first = rank0["first_divergence"]
    assert (first["kernel"], first["kind"]) == ("c10d::allreduce_", "collective"), first


@pytest.mark.gpu
def test_ddp_on_a_gpu(tmp_path: Path, inductor_cache: Path) -> None:
    _check_ddp(tmp_path, _gpu_env(inductor_cache), "cuda")


def test_a_distributed_tensor_s_ops_are_hashed_through_its_local_shard(tmp_path: Path) -> None:
    # FSDP2's parameters are DTensors: the optimizer's ops on them read and
    # write their local shards, which must be hashed, or every parameter
    # update is invisible and its next reader looks like a root cause.
    script = tmp_path / "shard.py"
    script.write_text(
        "import torch, torch.distributed as dist, tritontui\n"
        "from torch.distributed.fsdp import fully_shard\n"
        "dist.init_process_group('gloo', init_method='tcp://127.0.0.1:0', rank=0, world_size=1)\n"
        "model = fully_shard(torch.nn.Linear(8, 4))\n"
        "opt = torch.optim.AdamW(model.parameters(), lr=0.1)\n"
        "model(torch.randn(2, 8)).sum().backward()\n"
        f"with tritontui.record({str(tmp_path / 't.msgpack')!r}):\n"
        "    opt.step()\n"
        "dist.destroy_process_group()\n"
    )
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    run_ok([sys.executable, str(script)], tmp_path, env)
    updates = [
        r
        for r in dump(tmp_path / "t.msgpack")
        if r["type"] == "launch" and r["kernel"] in ("aten::lerp_.Scalar", "aten::addcdiv_")
    ]
    assert len(updates) >= 4, updates
    for update in updates:
        param = update["args"][0]
        assert param["shape"] in ([4, 8], [4]), param
        assert param["pre"] is not None and param["post"] is not None, update


def test_what_a_collective_s_wait_runs_is_not_recorded(tmp_path: Path) -> None:
    # gloo's reduce-scatter copies each rank's share out of its own buffer
    # inside Work.wait, as a dispatched copy_ reading memory no recorded
    # launch wrote: a root cause where there is none, unless the wait is
    # left out.
    script = tmp_path / "scatter.py"
    script.write_text(
        "import torch, torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "rank = dist.get_rank()\n"
        "out = torch.empty(4)\n"
        "dist.reduce_scatter_tensor(out, torch.arange(8.0) * (rank + 1), async_op=True).wait()\n"
        "y = out * 2\n"
        "dist.destroy_process_group()\n"
    )
    env = {**os.environ, "TRITONTUI_RECORD": "run/rank{rank}.msgpack", "CUDA_VISIBLE_DEVICES": ""}
    run_ok([*TORCHRUN, str(script)], tmp_path, env)
    for rank in (0, 1):
        records = dump(tmp_path / "run" / f"rank{rank}.msgpack")
        kernels = [r["kernel"] for r in records if r["type"] == "launch"]
        assert kernels[-2:] == ["c10d::_reduce_scatter_base_", "aten::mul.Tensor"], kernels
        assert "aten::copy_" not in kernels, kernels


def _check_fsdp(tmp_path: Path, env: dict[str, str], device: str) -> None:
    ranks, _ = _compare_runs(tmp_path, {**env, "FSDP": "1"}, device)
    # Each collective names its process group, with its backend and members.
    groups = ranks["groups"]
    assert groups and all(g["name"] != "?" and g["members"] for g in groups), groups
    launches = [r for r in dump(tmp_path / "run0" / "rank0.msgpack") if r["type"] == "launch"]
    kernels = {r["kernel"] for r in launches}
    assert {"c10d::_allgather_base_", "c10d::_reduce_scatter_base_"} <= kernels, kernels


def test_fsdp2_rank_0_s_divergence_comes_only_through_its_collectives(
    tmp_path: Path, inductor_cache: Path
) -> None:
    _check_fsdp(tmp_path, _cpu_env(inductor_cache), "cpu")


@pytest.mark.gpu
def test_fsdp2_on_a_gpu(tmp_path: Path, inductor_cache: Path) -> None:
    _check_fsdp(tmp_path, _gpu_env(inductor_cache), "cuda")

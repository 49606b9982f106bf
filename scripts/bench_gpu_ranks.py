"""What recording costs each rank of a two-GPU job: the GPU benchmark's
bf16 transformer (bench_gpu.Block, 4 layers, d=1024) trained under DDP
over NCCL, compiled, with AdamW; each rank times 10 steps unrecorded and
10 recorded (the defaults, metadata only, fingerprints only with and
without hashes), taking turns for ROUNDS rounds, and prints its median
step times and per-round ratios. Each rank records into a trace of its
own.

    torchrun --standalone --nproc_per_node=2 scripts/bench_gpu_ranks.py   # ROUNDS=6
"""

from __future__ import annotations

import os
import statistics
import sys

import torch
import torch.distributed as dist
from _bench import paired_ratios, summary, take_turns
from bench_gpu import Block, cuda_time
from torch.nn.parallel import DistributedDataParallel

ROUNDS = int(os.environ.get("ROUNDS", "6"))
MODES = {
    "unrecorded": None,
    "defaults (exact hashes in+out)": {},
    "defaults, metadata only (hash='none')": {"hash": "none"},
    "fingerprints only (fingerprint=True)": {"fingerprint": True},
    # No collective waited for or hashed: what observing every op costs.
    "fingerprints, hash='none'": {"fingerprint": True, "hash": "none"},
}


def main() -> None:
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[Block(1024, 16) for _ in range(4)]).cuda().to(torch.bfloat16)
    ddp = DistributedDataParallel(torch.compile(model), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=1e-4)
    x = torch.randn(8, 512, 1024, device="cuda", dtype=torch.bfloat16)

    def step() -> None:
        ddp(x).float().pow(2).mean().backward()
        optimizer.step()
        optimizer.zero_grad()

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    times = take_turns(MODES, lambda: cuda_time(step, 10), ROUNDS)
    ratios = paired_ratios(times, "unrecorded")
    lines = [f"rank {rank}:"]
    for label in MODES:
        lines.append(
            f"  {label:40} {statistics.median(times[label]) * 1e3:8.2f} ms {summary(ratios[label])}"
        )
    for r in range(dist.get_world_size()):
        if r == rank:
            print("\n".join(lines), flush=True)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())

"""The hash table kernel on the tables a transformer block's graph hashes
together: each table (its tensors in one ``tthash_table`` launch, as a
captured launch's hashes after it and the next one's before it are) timed
by ``torch.profiler`` (the kernel only), with the read rate it reaches.
The tensors are those of ``scripts/bench_gpu.py``'s transformer (d=1024,
16 heads, 8x512 tokens): contiguous activations, attention's q, k and v
permuted out of a packed projection (read as pairs of words), the mm
weights transposed (read down their columns), and a graph call's inputs
(its parameters, hashed 16 to a launch before each call). Each table is
hashed from enough copies of its tensors that no launch finds them in L2.
Needs CUDA.

    python scripts/bench_gpu_tables.py [bfloat16|float32 ...]
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable

import torch
import tritontui
from torch.profiler import ProfilerActivity, profile
from tritontui import _native

D = 1024
# Copies of each table's tensors, hashed in turn: more bytes than the L2.
COPIES = 6
REPEATS = 30


def block_tables(dtype: torch.dtype) -> dict[str, list[torch.Tensor]]:
    """One copy of the tables: name -> the tensors hashed in one launch."""

    def z(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, device="cuda", dtype=dtype)

    qkv = z(8, 512, 3 * D).view(8, 512, 3, 16, 64)
    q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
    out = z(8, 512, 16, 64).transpose(1, 2)
    x, h, packed, up = z(8, 512, D), z(8, 512, D), z(8, 512, 3 * D), z(8, 512, 4 * D)
    bias = z(D)
    w_qkv, w_o, w_up, w_down = z(3 * D, D).t(), z(D, D).t(), z(4 * D, D).t(), z(D, 4 * D).t()
    return {
        "32 MB contiguous": [up],
        "q, k, v (pairs)": [q, k, v],
        "W_up.t() (columns)": [w_up],
        "qkv mm after, attention before": [bias, x, w_qkv, packed, q, k, v],
        "attention after, o-proj before": [q, k, v, out, bias, h, w_o],
        "up mm after, gelu before": [bias, x, w_up, up],
        "down mm before, 32 MB and a weight": [up, bias, w_down],
        "a graph call's inputs (16 parameters)": parameters(z),
    }


def parameters(z: Callable[..., torch.Tensor]) -> list[torch.Tensor]:
    """The first 16 parameters of the transformer, as its graph call's
    inputs are hashed (16 to a table launch): a block's norms, weights and
    biases, then the next block's first four."""
    attention = [z(D), z(D), z(3 * D, D), z(3 * D), z(D, D), z(D)]
    mlp = [z(D), z(D), z(4 * D, D), z(4 * D), z(D, 4 * D), z(D)]
    return [*attention, *mlp, z(D), z(D), z(3 * D, D), z(3 * D)]


def table_us(copies: list[list[torch.Tensor]]) -> float:
    """The median kernel time of one table launch, the copies in turn."""
    stream = torch.cuda.current_stream().cuda_stream

    def launch(tensors: list[torch.Tensor]) -> None:
        batch = _native.GpuBatch(0, stream)
        for t in tensors:
            batch.hash(t.data_ptr(), t.element_size(), list(t.shape), list(t.stride()))
        batch.wait()

    for tensors in copies:
        launch(tensors)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(REPEATS):
            launch(copies[i % len(copies)])
        torch.cuda.synchronize()
    times = [e.device_time for e in prof.events() if e.name == "tthash_table"]
    return statistics.median(times)


def main(dtype: torch.dtype) -> None:
    copies = [block_tables(dtype) for _ in range(COPIES)]
    for tensors in copies[0].values():
        for t in tensors:
            assert tritontui.hash_tensor(t) == tritontui.hash_tensor(t.cpu()), (t.shape, t.stride())
    print(f"\n{dtype}: one tthash_table launch per row, median of {REPEATS}")
    print(f"  {'table':36} {'MB':>6} {'us':>7} {'TB/s':>6}")
    for name in copies[0]:
        tables = [c[name] for c in copies]
        nbytes = sum(t.numel() * t.element_size() for t in tables[0])
        us = table_us(tables)
        print(f"  {name:36} {nbytes / 2**20:6.1f} {us:7.1f} {nbytes / us / 1e6:6.2f}")


if __name__ == "__main__":
    print(torch.cuda.get_device_name(0), torch.__version__)
    for name in sys.argv[1:] or ["bfloat16", "float32"]:
        main(getattr(torch, name))

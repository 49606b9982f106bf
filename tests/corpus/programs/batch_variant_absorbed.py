"""A compiled float32 function on the CPU (two threads): a matmul of a
request's 32 rows (1,024 wide) by a weight, then, per row, how many of its
256 outputs are positive. Evaluated under ``no_grad`` on one request
alone; with --variant on the same request as row 0 of a batch of 8. The
matmul (``aten::mm``, 1024 -> 256) gives the request's rows other bits
among 256 rows than alone, but no output moves across zero, so the count,
the request's output, is the same. Recorded with row hashes (``rows``).
The program keeps the whole output, as ``tritontui.check_batch_invariance``
does (``[1, 32]`` in run A, ``[8, 32]`` in run B): the fingerprinted
result is the request's row of it (a view). What confirms it is the
matmul run alone on the request's rows, by themselves and inside the
batch."""

import torch
from _harness import parse, run

args = parse(__doc__, variant="the request as row 0 of a batch of 8")
torch.manual_seed(0)
weight = torch.randn(1024, 256)


def positives(x: torch.Tensor) -> torch.Tensor:
    return (x @ weight > 0).to(torch.float32).sum(-1)


batch = torch.randn(8, 32, 1024, generator=torch.Generator().manual_seed(1))


def matmul_apart() -> dict[str, float]:
    """The matmul on the request's rows alone against the same rows among
    the batch's 256, and the counts of both: the largest differences."""
    alone, inside = batch[0] @ weight, (batch.reshape(256, 1024) @ weight)[:32]
    return {
        "mm 1024->256": (alone - inside).abs().max().item(),
        "positives": ((alone > 0).sum(-1) - (inside > 0).sum(-1)).abs().max().item(),
    }


compiled = torch.compile(positives)
x = batch if args.variant else batch[:1].clone()
# What the program holds when recording stops.
kept = []


def main() -> dict[str, torch.Tensor]:
    with torch.no_grad():
        out = compiled(x)
    kept.append(out)
    return {"request": out[0]}


run(args, main, rows=True, confirm=matmul_apart)

"""What every corpus program shares: its command line, the recorded
region, and a bitwise fingerprint of its results printed outside it.

A program runs ``main(args)`` inside ``tritontui.record(--out)`` and
returns the tensors that are its results (loss, parameters, gradients,
optimizer state, outputs). The fingerprint (one tthash64 per result, by
name) is written to ``--fingerprint`` after recording stops, so the
expected verdict of a pair can be established without the engine."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import torch
import tritontui


def parse(description: str, variant: str | None = None, blocks: bool = False) -> argparse.Namespace:
    """``--out TRACE --fingerprint JSON [--variant]`` (the variant flag is
    what run B of a pair passes, when the pair differs on purpose). A
    program that records both runs of its pair in one process (``blocks``)
    also takes ``--out-b`` (by default ``--out`` with ``-b`` before its
    extension)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", required=True, help="trace to record")
    parser.add_argument("--fingerprint", required=True, help="JSON of the results' hashes")
    if variant:
        parser.add_argument("--variant", action="store_true", help=variant)
    if blocks:
        parser.add_argument("--out-b", help="trace of the second block (run B)")
    parser.add_argument(
        "--float64",
        action="store_true",
        help="run in float64: the reference run of `diff --reference` (programs that take it)",
    )
    args = parser.parse_args()
    if blocks and args.out_b is None:
        root, extension = os.path.splitext(args.out)
        args.out_b = f"{root}-b{extension}"
    return args


def recording(path: str, **options: object) -> contextlib.AbstractContextManager:
    """``tritontui.record(path, **options)``; nothing with
    CORPUS_UNRECORDED=1, which runs the same program unrecorded (the
    tests compare what torch compiles in both)."""
    if os.environ.get("CORPUS_UNRECORDED") == "1":
        return contextlib.nullcontext()
    return tritontui.record(path, **options)


def run(
    args: argparse.Namespace,
    main: Callable[[], dict[str, torch.Tensor]],
    threads: int = 2,
    samples: bool = False,
    reference: Callable[[], dict[str, torch.Tensor]] | None = None,
    rows: bool = False,
    confirm: Callable[[], dict[str, float]] | None = None,
    options: dict[str, object] | None = None,
) -> None:
    """Records ``main()`` (with ``samples``, ``rows`` when asked) and writes the
    fingerprint of what it returns. With a ``reference`` (the same
    program in float64, run after recording stopped), each result's
    error against it (``fp64_error``) goes beside the fingerprint
    (``FINGERPRINT.fp64``): the truth of a numerics verdict, taken
    without the engine. With ``confirm``, what it measures after
    recording stopped (each suspected kernel run alone, by name) goes
    beside it too (``FINGERPRINT.confirmed``). ``options``: other
    recording options (``fingerprint``, ``from_step``, ``to_step``)."""
    torch.set_num_threads(threads)
    options = {
        **{name: True for name, on in (("samples", samples), ("rows", rows)) if on},
        **(options or {}),
    }
    with recording(args.out, **options):
        results = main()
    write_fingerprint(args, fingerprint(results))
    if confirm is not None:
        with open(f"{args.fingerprint}.confirmed", "w") as f:
            json.dump(confirm(), f, indent=1, sort_keys=True)
    if reference is not None:
        exact = reference()
        errors = {name: fp64_error(results[name], exact[name]) for name in results if name in exact}
        with open(f"{args.fingerprint}.fp64", "w") as f:
            json.dump(errors, f, indent=1, sort_keys=True)


def fp64_error(value: torch.Tensor, exact: torch.Tensor) -> dict[str, object]:
    """How far ``value`` is from the float64 run's ``exact``, as the
    accuracy minifier's rule (``torch._dynamo.utils.same``) weighs it: the
    root mean square error, the element count and dtype that pick its
    multiplier; and ``‖value - exact‖₂ / ‖exact‖₂`` (0 for two zero
    tensors)."""
    dtype = str(value.dtype).removeprefix("torch.")
    value, exact = value.detach().double().cpu(), exact.detach().double().cpu()
    scale = exact.norm().item()
    error = (value - exact).norm().item()
    return {
        "relative": error / scale if scale else error,
        "rmse": (value - exact).square().mean().sqrt().item() if value.numel() else 0.0,
        "numel": value.numel(),
        "dtype": dtype,
    }


def run_blocks(
    args: argparse.Namespace,
    first: Callable[[], dict[str, torch.Tensor]],
    second: Callable[[], dict[str, torch.Tensor]],
    between: Callable[[], object] = lambda: None,
    threads: int = 2,
) -> None:
    """Records ``first()`` into ``--out`` and then, in the same process,
    ``second()`` into ``--out-b``, as a notebook or a test records two
    calls, with ``between()`` run unrecorded between the blocks; what
    ``first()`` returned stays alive through the second block. The
    fingerprint holds both runs' (``{"a": ..., "b": ...}``)."""
    torch.set_num_threads(threads)
    with recording(args.out):
        results_a = first()
    fingerprint_a = fingerprint(results_a)
    between()
    with recording(args.out_b):
        results_b = second()
    write_fingerprint(args, {"a": fingerprint_a, "b": fingerprint(results_b)})


def fingerprint(results: dict[str, torch.Tensor]) -> dict[str, str]:
    """One tthash64 per result, by name, as text."""
    return {name: f"{tritontui.hash_tensor(t.detach()):016x}" for name, t in results.items()}


def write_fingerprint(args: argparse.Namespace, hashes: dict[str, object]) -> None:
    """Writes the results' fingerprint (name -> exact value as text)."""
    with open(args.fingerprint, "w") as f:
        json.dump(hashes, f, indent=1, sort_keys=True)


def train(
    optimizer: torch.optim.Optimizer, loss: Callable[[], torch.Tensor], steps: int
) -> torch.Tensor:
    """``steps`` optimizer steps on ``loss()``; returns the losses."""
    losses = []
    for _ in range(steps):
        value = loss()
        optimizer.zero_grad()
        value.backward()
        optimizer.step()
        losses.append(value.detach())
    return torch.stack(losses)


def state(
    model: torch.nn.Module, optimizer: torch.optim.Optimizer | None = None
) -> dict[str, torch.Tensor]:
    """Parameters, gradients and optimizer state by name."""
    out: dict[str, torch.Tensor] = {}
    for name, p in model.named_parameters():
        out[name] = p
        if p.grad is not None:
            out[f"{name}.grad"] = p.grad
    for name, b in model.named_buffers():
        out[name] = b
    if optimizer is not None:
        names = {id(p): n for n, p in model.named_parameters()}
        for p, s in optimizer.state.items():
            for key, value in s.items():
                if isinstance(value, torch.Tensor):
                    out[f"{names.get(id(p), '?')}.{key}"] = value
    return out


def under_torchrun(ranks: int = 2) -> None:
    """Run without torchrun, starts torchrun (``ranks`` ranks on this host)
    on this program with its arguments and exits with its status."""
    if "RANK" in os.environ:
        return
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    command += [f"--nproc_per_node={ranks}", *sys.argv]
    sys.exit(subprocess.run(command).returncode)


def gloo_rank() -> int:
    """Under torchrun: joins the gloo process group, computing on one
    thread; returns this process's rank."""
    import torch.distributed as dist

    dist.init_process_group("gloo")
    torch.set_num_threads(1)
    return dist.get_rank()


def gpu_rank() -> tuple[int, torch.device]:
    """Under torchrun: this rank's GPU made current, and the process group
    joined on NCCL (gloo where two ranks share one GPU); this process's
    rank and its device."""
    import torch.distributed as dist

    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank % torch.cuda.device_count())
    torch.cuda.set_device(device)
    dist.init_process_group("nccl" if torch.cuda.device_count() >= 2 else "gloo")
    return dist.get_rank(), device


def keep_rank_zero(args: argparse.Namespace, rank: int, fingerprint: dict[str, str]) -> None:
    """Each rank recorded into ``--out`` + ``.rank{rank}``: rank 0's trace
    becomes ``--out``, with ``fingerprint``; the others' are dropped."""
    trace = Path(f"{args.out}.rank{rank}")
    if rank == 0:
        write_fingerprint(args, fingerprint)
    if not trace.exists():  # run unrecorded
        return
    if rank == 0:
        trace.rename(args.out)
    else:
        trace.unlink()

"""Compiled CUDA calls whose inputs are large enough (256 MB) for their
hashes to run beside the call: a call that only reads them, a call whose
first kernel updates an input in place, and under mode="reduce-overhead" a
module whose graph only reads its weight and one whose graph updates its
buffer at every replay. Where a kernel or a replay writes an input, the
input hashes must have read it before. Records to argv[1] with the default
options; prints how many graph calls' input hashes ran beside the call,
whether the kernels writing an input began after they ended (one more
call of each writing graph, profiled), the CUDA graph replays torch made,
and a hash of what the calls returned."""

import sys

import torch
import tritontui
from _replays import count_replays
from tritontui import _native

N = 1 << 26  # float32: 256 MB, read by the input hashes for about 60 us


class Scaled(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.linspace(-1, 1, N, device="cuda"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * self.weight).sum()


class Counted(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("seen", torch.zeros(N, device="cuda"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.seen.add_(x)
        return self.seen.sum()


@torch.compile
def reads(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.relu(x * w).sum()


@torch.compile
def updates(x: torch.Tensor) -> None:
    # One kernel, writing x in place.
    x.mul_(0.5).add_(1)


def busy() -> None:
    """Keeps the stream busy for about 5 ms, so that the whole of the next
    call is enqueued before any of it runs: a kernel writing an input is
    then ready the moment the input hashes beside it are, and would run
    with them if nothing made it wait."""
    torch.cuda._sleep(10_000_000)


def ordered(call) -> str:
    """Runs ``call`` under the profiler: whether its first Triton kernel
    began after the input hashes running beside it ended ("none" when none
    ran beside it)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        busy()
        call()
        torch.cuda.synchronize()
    kernels = [
        (e.name(), e.device_resource_id(), e.start_ns(), e.start_ns() + e.duration_ns())
        for e in prof.profiler.kineto_results.events()
        if e.device_type() == torch.autograd.DeviceType.CUDA
    ]
    triton = [k for k in kernels if k[0].startswith("triton_")]
    if not triton:
        return "none"
    first = min(k[2] for k in triton)
    # The input hashes: hash kernels on another stream than the call's
    # that began before its first kernel (a graph's own hash kernels
    # beside its launches begin after them).
    streams = {k[1] for k in triton}
    beside = [k for k in kernels if k[0] == "tthash_table" and k[1] not in streams]
    beside = [k for k in beside if k[2] < first]
    return str(first >= max(k[3] for k in beside)) if beside else "none"


replays = count_replays()
torch.manual_seed(0)
x = torch.randn(N, device="cuda")
w = torch.randn(N, device="cuda")
scaled = torch.compile(Scaled(), mode="reduce-overhead")
count = torch.compile(Counted(), mode="reduce-overhead")
returned = []
with tritontui.record(sys.argv[1]):
    start = _native.input_hash_forks()
    with torch.no_grad():
        for _ in range(4):
            returned.append(reads(x, w))
            busy()
            updates(x)
            returned.append(x.sum())
            torch.compiler.cudagraph_mark_step_begin()
            returned.append(scaled(x).clone())
            busy()
            returned.append(count(x).clone())
    torch.cuda.synchronize()
    print("input hash forks", _native.input_hash_forks() - start)
    with torch.no_grad():
        print("updates", ordered(lambda: updates(x)))
        torch.compiler.cudagraph_mark_step_begin()
        print("count", ordered(lambda: count(x)))
print("replays", replays["replays"])
print(f"returned {tritontui.hash_tensor(torch.stack(returned)):016x}")

"""The recorder on a CUDA device: device hashes equal host hashes, and real
compiled programs recorded on the GPU. Skipped without CUDA."""

from __future__ import annotations

import math
import os
import random
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest
import torch
import tritontui
from conftest import Paused, attach, binary, diff, dump, launches, repro
from test_recorded_meaning import assert_inherited_hashes_are_exact, assert_optimizer_steps_inherit

pytestmark = pytest.mark.gpu

DTYPES = [
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.float8_e4m3fn,
    torch.float64,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.uint8,
    torch.bool,
    torch.complex64,
]


def both(t: torch.Tensor) -> tuple[int | None, int | None]:
    return tritontui.hash_tensor(t), tritontui.hash_tensor(t.cpu())


def test_hashing_runs_on_the_device() -> None:
    from tritontui import _native, _tensors

    assert _native.gpu_supported() and _tensors.gpu_hashing()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_device_hashes_equal_host_hashes(dtype: torch.dtype) -> None:
    base = torch.randn(37, 101, device="cuda") * 3
    t = base > 0 if dtype == torch.bool else base.to(dtype)
    views = [t, t.t(), t[::3, 1::2], t[5], t[:, 7], t[2:3].expand(4, 101), t.reshape(-1)[1:]]
    for v in views:
        gpu, cpu = both(v)
        assert gpu is not None and gpu == cpu, (dtype, v.shape, v.stride(), v.storage_offset())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_views_read_row_by_row_hash_as_on_the_host(dtype: torch.dtype) -> None:
    # Permuted dense tensors and slices of them (attention's q, k, v) are
    # read a word at a time when their rows are whole aligned words, else
    # element by element.
    base = torch.randn(2, 6, 5, 4, 16, device="cuda") * 3
    t = base > 0 if dtype == torch.bool else base.to(dtype)
    views = [
        t.permute(0, 2, 1, 3, 4),
        t[:, 2:5],
        t.select(2, 1),
        t.permute(1, 0, 2, 3, 4)[..., 8:],
        t[..., 1:9],
        t[..., 3:6],
        t.reshape(-1)[8:],
        t.reshape(-1)[1:],
    ]
    if dtype in (torch.float32, torch.bfloat16):
        big = torch.randn(8, 512, 16, 64, device="cuda").to(dtype)
        views += [big.permute(0, 2, 1, 3), big[:, :, 3:11]]
    for v in views:
        gpu, cpu = both(v)
        assert gpu is not None and gpu == cpu, (dtype, v.shape, v.stride(), v.storage_offset())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_transposed_views_hash_as_on_the_host(dtype: torch.dtype) -> None:
    # An mm's `weight.t()` and batched transposes whose rows are whole words
    # are read in the order of memory, a word's elements gathered down the
    # columns; rows that end inside a word (37 elements) are read element by
    # element in logical order.
    base = torch.randn(6, 40, 96, device="cuda") * 3
    t = base > 0 if dtype == torch.bool else base.to(dtype)
    views = [
        t[0].t(),
        t.transpose(1, 2),
        t[:, :, 8:].transpose(1, 2),
        t[1:, 1:33].transpose(1, 2),
        t.permute(2, 0, 1),
        t[:, 3:].transpose(1, 2),
        t[0].t()[::2],
        t[0, :, :1].t().expand(5, 40),
    ]
    if dtype in (torch.float32, torch.bfloat16):
        weight = torch.randn(3072, 1024, device="cuda").to(dtype)
        # 16-byte loads down the columns where they start on 16 bytes and
        # their rows come in whole loads; 8-byte loads elsewhere.
        views += [weight.t(), weight[:, 16:].t(), weight[:, 4:].t(), weight[:, 2:].t()]
    for v in views:
        gpu, cpu = both(v)
        assert gpu is not None and gpu == cpu, (dtype, v.shape, v.stride(), v.storage_offset())


def random_view(rng: random.Random, dtype: torch.dtype) -> torch.Tensor:
    """A permuted and sometimes narrowed view of a dense tensor that starts
    0 to 8 elements into its storage: rows of whole words or not, starting
    on 16 bytes or off them, read down columns or along rows."""
    shape = [rng.choice([1, 2, 3, 4, 5, 8, 12, 16, 24, 64]) for _ in range(rng.randint(2, 4))]
    offset = rng.choice([0, 0, 1, 2, 4, 8])
    numel = math.prod(shape)
    base = torch.randn(offset + numel, device="cuda") * 3
    flat = base > 0 if dtype == torch.bool else base.to(dtype)
    t = flat[offset:].view(shape)
    order = list(range(len(shape)))
    rng.shuffle(order)
    t = t.permute(order)
    if rng.random() < 0.5:
        d = rng.randrange(t.dim())
        start = rng.randrange(t.shape[d])
        t = t.narrow(d, start, rng.randint(1, t.shape[d] - start))
    return t


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_random_views_hash_as_on_the_host(dtype: torch.dtype) -> None:
    # Every way the table kernel reads a view (words, pairs of words,
    # elements, columns, element by element) on shapes nobody chose.
    rng = random.Random(str(dtype))
    for _ in range(80):
        v = random_view(rng, dtype)
        gpu, cpu = both(v)
        assert gpu is not None and gpu == cpu, (dtype, v.shape, v.stride(), v.storage_offset())


def test_one_table_of_very_different_sizes() -> None:
    """A table launch shares the device's blocks among its hashes by bytes:
    a byte, a word, megabytes read contiguously, down columns and through a
    permutation, hashed together."""
    from tritontui import _native

    big = torch.randn(4096, 3072, device="cuda").to(torch.bfloat16)
    tensors = [
        torch.ones(1, dtype=torch.uint8, device="cuda"),
        torch.ones(1, dtype=torch.float64, device="cuda"),
        big,
        big[:, 1024:2048].view(8, 512, 16, 64).permute(0, 2, 1, 3),
        big.t(),
        big.float()[:1000],
        big[::2].t(),
    ]
    batch = _native.GpuBatch(0, torch.cuda.current_stream().cuda_stream)
    for t in tensors:
        batch.hash(t.data_ptr(), t.element_size(), list(t.shape), list(t.stride()))
    assert batch.wait() == [tritontui.hash_tensor(t.cpu()) for t in tensors]


def test_empty_zero_dim_and_odd_lengths() -> None:
    for t in [
        torch.empty(0, 5, device="cuda"),
        torch.tensor(3.5, device="cuda"),
        torch.arange(13, dtype=torch.uint8, device="cuda"),
        torch.arange(4099, dtype=torch.float16, device="cuda"),
    ]:
        gpu, cpu = both(t)
        assert gpu == cpu, t.shape


def test_one_batch_of_many_tensors_spans_several_table_launches() -> None:
    """A batch gathers up to 16 hashes per kernel launch; 40 take three,
    mixing sizes, views and an empty tensor."""
    from tritontui import _native

    base = torch.randn(64, 1000, device="cuda")
    tensors = [base[i, : 17 * i + 1] for i in range(30)]
    tensors += [base.t()[::7], base[::5, ::3], torch.empty(0, device="cuda")]
    tensors += [(base[i] * 1e3).to(torch.int32) for i in range(7)]
    batch = _native.GpuBatch(0, torch.cuda.current_stream().cuda_stream)
    for t in tensors:
        batch.hash(t.data_ptr(), t.element_size(), list(t.shape), list(t.stride()))
    assert batch.wait() == [tritontui.hash_tensor(t.cpu()) for t in tensors]


def test_cuda_arguments_are_read_from_the_tensor_impl(tmp_path: Path) -> None:
    from tritontui import _native

    path = tmp_path / "t.msgpack"
    base = torch.randn(48, 40, device="cuda")
    inputs = [base, base.t(), base[3:, ::2], base.to(torch.bfloat16)[1], base[None, :, None]]
    inputs += [base.to(torch.int64)[::4].contiguous(), torch.tensor(2.0, device="cuda")]
    with tritontui.record(path, hash="inputs"):
        for _ in range(3):  # past the first reads, which are checked
            for t in inputs:
                t.clone()
    assert _native.fast_tensor_reads()
    recorded = [r for r in launches(path) if r["kernel"] == "aten::clone"]
    assert len(recorded) == 3 * len(inputs)
    for t, launch in zip(inputs * 3, recorded, strict=True):
        arg = launch["args"][0]
        assert launch["device"] == 0
        assert arg["shape"] == list(t.shape) and arg["stride"] == list(t.stride())
        assert int(arg["ptr"], 16) == t.data_ptr()
        assert int(arg["pre"], 16) == tritontui.hash_tensor(t.cpu())


def test_a_tensor_over_4_gib() -> None:
    t = torch.randint(0, 255, ((4 << 30) + 4099,), dtype=torch.uint8, device="cuda")
    gpu, cpu = both(t)
    assert gpu == cpu
    t[-1] ^= 1
    assert tritontui.hash_tensor(t) != gpu


def test_a_model_recorded_twice_on_the_gpu_is_identical(run_program, tmp_path: Path) -> None:
    run_program("gpu_train_step.py", "a.msgpack")
    run_program("gpu_train_step.py", "b.msgpack")
    status, report = diff(tmp_path / "a.msgpack", tmp_path / "b.msgpack")
    assert status == 0, report["first_divergence"]
    recorded = launches(tmp_path / "a.msgpack")
    triton = [r for r in recorded if r["backend"] == "triton"]
    assert triton, [r["kernel"] for r in recorded]
    for r in triton:
        assert r["device"] == 0 and len(r["grid"]) == 3
        for arg in r["args"]:
            if "dtype" in arg and arg["access"] != "out":
                assert arg["pre"] is not None and arg["post"] is not None


def test_index_add_is_nondeterministic_on_the_gpu(run_program, tmp_path: Path) -> None:
    run_program("gpu_index_add.py", "run0.msgpack")
    for attempt in range(1, 6):
        run_program("gpu_index_add.py", f"run{attempt}.msgpack")
        status, report = diff(tmp_path / "run0.msgpack", tmp_path / f"run{attempt}.msgpack")
        if status == 1:
            break
    assert status == 1, "five runs of a GPU index_add all agreed bit for bit"
    first = report["first_divergence"]
    assert first["kind"] == "nondeterministic-kernel", first
    assert first["kernel"].startswith("triton_") and "atomic" in first["detail"]
    assert len(report["root_causes"]) == 1
    assert report["divergence_count"] > 1
    assert all(not d["root_cause"] for d in report["divergences"][1:])


def test_a_user_triton_kernel_with_a_callable_grid(tmp_path: Path) -> None:
    import triton
    import triton.language as tl

    @triton.jit
    def double(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2, mask=mask)

    x = torch.randn(5000, device="cuda")
    out = torch.zeros_like(x)
    path = tmp_path / "t.msgpack"
    with tritontui.record(path, aten=False):
        double[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, out, 5000, BLOCK=1024)
    torch.cuda.synchronize()
    assert torch.equal(out, x * 2)
    (launch,) = launches(path)
    assert (launch["kernel"], launch["backend"], launch["grid"]) == (
        "double",
        "user-triton",
        [5, 1, 1],
    )
    x_arg, out_arg = launch["args"][0], launch["args"][1]
    assert int(x_arg["pre"], 16) == tritontui.hash_tensor(x.cpu())
    assert int(out_arg["post"], 16) == tritontui.hash_tensor(out.cpu()) and out_arg["written"]


def device_stats(t: torch.Tensor) -> tuple:
    """The device summary of ``t``, waited for."""
    from tritontui import _native, _tensors

    batch = _native.GpuBatch(t.device.index, torch.cuda.current_stream().cuda_stream)
    index = batch.stats(t.data_ptr(), _tensors.dtype_name(t), list(t.shape), list(t.stride()))
    assert index == 0, "the summary was not computed on the device"
    return batch.wait()[0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_device_stats_agree_with_host_stats_and_repeat_exactly(dtype: torch.dtype) -> None:
    from tritontui import _tensors

    base = torch.randn(301, 257, device="cuda") * 100
    base[3, 4], base[5, 6], base[7, 8] = float("nan"), float("inf"), float("-inf")
    base[9, 10] = 1e-40 if dtype == torch.float32 else 0.0  # a subnormal float32
    t = base.to(dtype)
    for v in [t, t.t(), t[::3, 1::2], t[:0]]:
        gpu = device_stats(v)
        cpu = _tensors.stats_tensor(v.cpu())
        assert gpu[:2] == cpu[:2] and gpu[3:] == cpu[3:], (gpu, cpu)
        assert abs(gpu[2] - cpu[2]) <= 1e-9 * max(cpu[2], 1e-30), (gpu, cpu)
        assert all(device_stats(v) == gpu for _ in range(5)), "device stats changed between runs"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_device_samples_are_the_host_s_at_the_same_places(dtype: torch.dtype) -> None:
    from test_recorder_api import sample_positions
    from tritontui import _native, _tensors

    t = (torch.randn(301, 257, device="cuda") * 100).to(dtype)
    for v in [t, t.t(), t[::3, 1::2], t[:1, :7]]:
        batch = _native.GpuBatch(v.device.index, torch.cuda.current_stream().cuda_stream)
        index = batch.samples(v.data_ptr(), _tensors.dtype_name(v), list(v.shape), list(v.stride()))
        assert index == 0, "the samples were not taken on the device"
        (got,) = batch.wait()
        flat = v.float().cpu().flatten().tolist()
        assert got == [flat[i] for i in sample_positions(v.numel())]


def test_a_recording_with_samples_on_the_gpu_has_them(tmp_path: Path) -> None:
    from test_recorder_api import sample_positions

    f = torch.compile(lambda x: (x * 2).relu() + 1)
    x = torch.randn(64, 65, device="cuda")
    path = tmp_path / "s.msgpack"
    with tritontui.record(path, samples=True):
        y = f(x)
    torch.cuda.synchronize()
    triton = [r for r in launches(path) if r["backend"] == "triton"]
    written = [a["samples"] for r in triton for a in r["args"] if a.get("samples")]
    flat = y.cpu().flatten().tolist()
    assert [flat[i] for i in sample_positions(y.numel())] in written, triton


def test_a_recording_with_stats_on_the_gpu_has_them(tmp_path: Path) -> None:
    f = torch.compile(lambda x: (x * 2).relu() + 1)
    x = torch.randn(4096, device="cuda")
    path = tmp_path / "s.msgpack"
    with tritontui.record(path, stats=True):
        y = f(x)
    torch.cuda.synchronize()
    recorded = launches(path)
    outputs = [a for r in recorded if r["backend"] == "triton" for a in r["args"] if a.get("stats")]
    assert outputs, recorded
    expected = (y.min().item(), y.max().item())
    assert any((a["stats"]["min"], a["stats"]["max"]) == expected for a in outputs), outputs


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_attention_outputs_left_unwritten_are_recorded_as_allocated(
    tmp_path: Path, dtype: torch.dtype, causal: bool
) -> None:
    """Without dropout, SDPA's kernels return their random-number state
    unwritten (uninitialized memory): recorded as allocated, not hashed;
    also where the kernel's call leaves out ``dropout_p`` (not causal:
    torch drops the trailing arguments that hold their defaults)."""
    q = torch.randn(2, 2, 16, 16, device="cuda", dtype=dtype, requires_grad=True)
    path = tmp_path / "t.msgpack"
    with tritontui.record(path):
        torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=causal)
    attention = [r for r in launches(path) if r["kernel"].startswith("aten::_scaled_dot_product")]
    assert attention, [r["kernel"] for r in launches(path)]
    args = {a["name"]: a for a in attention[0]["args"]}
    state = [args[n] for n in ("philox_seed", "philox_offset", "rng_state") if n in args]
    assert state and all(a["allocated"] and a["post"] is None for a in state), args
    assert not args["output"]["allocated"] and args["output"]["post"] is not None, args


def test_a_compile_worker_pauses_before_compiling_a_matching_kernel(tmp_path: Path) -> None:
    # A fresh Inductor cache, so the kernels are compiled in the workers.
    cache = tmp_path / "cache"
    paused = Paused(tmp_path, cache, spec="triton_*", program="gpu_pausable.py")
    try:
        assert "compile-worker" in paused.line and "paused compiling triton_" in paused.line
        listed = attach("--list", paused.trace).stdout
        assert re.search(r"main\s+\S+\s+yes\s+running", listed), listed
        resumed = subprocess.run(
            [binary(), "resume", str(paused.trace)], capture_output=True, text=True, check=False
        )
        assert f"resumed pid {paused.pid}" in resumed.stderr, resumed.stderr
        assert "done" in paused.finish()
        states = [(p["pid"], p["state"]) for p in paused.pauses()]
        assert states == [(paused.pid, "paused"), (paused.pid, "resumed")], states
    finally:
        paused.kill()


@pytest.mark.skipif(shutil.which("cuda-gdb") is None, reason="no cuda-gdb")
def test_attach_hands_a_paused_gpu_launch_to_cuda_gdb(tmp_path: Path, inductor_cache: Path) -> None:
    """`tritontui attach` on a process paused before a Triton launch runs
    cuda-gdb on it: it says where it is and, once continued, stops in the
    kernel on the device; the program then runs to its end."""
    paused = Paused(tmp_path, inductor_cache, spec="1", program="gpu_pausable.py")
    try:
        kernel = re.search(r"paused before #1 (\S+)", paused.line)
        assert kernel, paused.line
        env = {k: v for k, v in os.environ.items() if k != "TRITONTUI_DEBUGGER"}
        session = subprocess.run(
            [binary(), "attach", str(paused.trace)],
            input="continue\ninfo cuda kernels\ndelete\ncontinue\n",
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            check=False,
        )
        out = session.stdout + session.stderr
        # (Its first backtrace is wherever cuda-gdb's attach stopped the
        # thread, often inside the CUDA debugger library, so it is not
        # checked here; gdb's is, in test_attach.)
        assert f"paused before launch #1 {kernel.group(1)}" in out, out
        # The pending breakpoint on the kernel stopped it on the device.
        assert f"CUDA thread hit Breakpoint 1, {kernel.group(1)}" in out, out
        assert "Switching focus to CUDA kernel" in out, out
        assert "done" in paused.finish(), out
    finally:
        paused.kill()


def test_a_reduce_overhead_compile_keeps_its_graphs_and_each_replay_is_recorded(
    tmp_path: Path,
) -> None:
    """The first call warms up (its launch recorded as it runs), the
    second captures and replays, the others replay: every launch is
    there, hashed, the replayed ones with their graph and replay."""
    torch._dynamo.reset()
    f = torch.compile(lambda x: (x * 2).sin() + 1, mode="reduce-overhead")
    x = torch.randn(4096, device="cuda")
    path = tmp_path / "t.msgpack"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tritontui.record(path, aten=False):
            results = [f(x).clone() for _ in range(4)]
    torch._dynamo.reset()
    assert all(torch.allclose(r, (x * 2).sin() + 1) for r in results)
    assert not any("CUDA graphs" in str(w.message) for w in caught)
    triton = [r for r in launches(path) if r["backend"] == "triton"]
    assert len(triton) == 4, [r["kernel"] for r in triton]
    assert [r["replay"] and r["replay"]["n"] for r in triton] == [None, 0, 1, 2]
    assert all(a["post"] is not None for r in triton for a in r["args"] if "dtype" in a)
    # The output of the last replay is what the program read.
    out = [a for a in triton[-1]["args"] if "dtype" in a][-1]
    assert out["post"] == f"0x{tritontui.hash_tensor(results[-1]):016x}"


def test_hashes_taken_from_the_data_flow_are_the_device_hashes_themselves(
    run_program, tmp_path: Path
) -> None:
    assert_inherited_hashes_are_exact(run_program, tmp_path, "cuda")


def test_an_optimizer_step_takes_its_device_hashes_from_the_data_flow(
    run_program, tmp_path: Path
) -> None:
    # Foreach AdamW on the device: its ops' inherited hashes are the
    # device hashes themselves, and deferred ones land in their launches.
    assert_optimizer_steps_inherit(run_program, tmp_path, "cuda")


def test_a_triton_kernel_s_pure_output_is_hashed_after_it_only(tmp_path: Path) -> None:
    # Its old bytes (a fresh buffer's) mean nothing: no hash before, none
    # read, and the hashes that are taken are exact.
    path = tmp_path / "t.msgpack"
    double = torch.compile(lambda t: t * 2 + 1)
    x = torch.randn(4096, device="cuda")
    double(x)
    with tritontui.record(path):
        for _ in range(3):
            out = double(x)
    assert {r["hash"] for r in dump(path) if r["type"] == "input"} == {
        f"{tritontui.hash_tensor(x.cpu()):#018x}"
    }
    kernel = [r for r in launches(path) if r["kernel"].startswith("triton_")][-1]
    tensors = [a for a in kernel["args"] if "dtype" in a]
    assert [(a["access"], a["pre"] is not None, a["inherited"]) for a in tensors] == [
        ("in", True, True),
        ("out", False, False),
    ], tensors
    assert tensors[1]["post"] == f"{tritontui.hash_tensor(out.cpu()):#018x}"


def test_deferred_device_hashes_are_those_hashed_launch_by_launch(
    run_program, tmp_path: Path
) -> None:
    # Inside a graph call, device hashes wait for later launches' tables
    # until a launch writes their bytes: in place, through a view of an
    # input, into a reused buffer. Every hash must be the one computed
    # launch by launch, with fewer table launches.
    cache = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")}
    counts = {}
    # The first run compiles and autotunes, whose benchmarks write into
    # memory the program freed while hashes of it wait.
    for name, defer in (("cold", "1"), ("deferred", "1"), ("stepwise", "0")):
        proc = run_program(
            "deferred_hashes.py",
            f"{name}.msgpack",
            env={**cache, "TRITONTUI_DEFER_HASHES": defer},
        )
        counts[name] = int(re.search(r"hash table launches (\d+)", proc.stdout).group(1))
    cold, deferred, stepwise = (
        launches(tmp_path / f"{n}.msgpack") for n in ("cold", "deferred", "stepwise")
    )
    assert [r["kernel"] for r in deferred] == [r["kernel"] for r in stepwise]
    assert [r["kernel"] for r in cold] == [r["kernel"] for r in stepwise]
    hashes = 0
    for a, b, c in zip(deferred, stepwise, cold, strict=True):
        for x, y, z in zip(a["args"], b["args"], c["args"], strict=True):
            if "dtype" not in x:
                continue
            where = (a["seq"], a["kernel"], x["name"])
            assert (x["pre"], x["post"], x["inherited"]) == (
                y["pre"],
                y["post"],
                y["inherited"],
            ), where
            # Bytes a fresh buffer held before its first launch depend on
            # what ran before (autotuning, on the cold run): only the
            # hashes of what launches wrote or read are compared.
            assert z["post"] == y["post"], where
            if z["access"] == "in":
                assert z["pre"] == y["pre"], where
            hashes += (x["pre"] is not None) + (x["post"] is not None)
    assert hashes > 200, hashes
    # Each call's input hashes are those of what it was given (x and state
    # are updated in place by the calls).
    entries = [
        [(r["name"], r["hash"]) for r in dump(tmp_path / f"{n}.msgpack") if r["type"] == "input"]
        for n in ("deferred", "stepwise", "cold")
    ]
    assert len(entries[0]) == 9 and all(h for _, h in entries[0]), entries[0]
    assert entries[0] == entries[1] == entries[2]
    assert counts["deferred"] < counts["stepwise"] * 0.7, counts
    assert diff(tmp_path / "deferred.msgpack", tmp_path / "stepwise.msgpack")[0] == 0


def test_input_hashes_beside_a_call_read_what_the_call_was_given(
    run_program, tmp_path: Path
) -> None:
    # A graph call's input hashes run beside its launches, and a CUDA
    # graph's replays, on a stream of their own; a kernel or a replay that
    # writes an input (256 MB, about 60 us of hashing) must wait for them.
    # Every hash must be the one taken with the inputs hashed before the
    # call (TRITONTUI_DEFER_HASHES=0).
    out = {}
    for name, defer in (("beside", "1"), ("before", "0")):
        out[name] = run_program(
            "inputs_beside.py", f"{name}.msgpack", env={"TRITONTUI_DEFER_HASHES": defer}
        ).stdout
    forks = {n: int(re.search(r"input hash forks (\d+)", o).group(1)) for n, o in out.items()}
    # Four calls of four graphs: all but the graph trees' recording calls
    # (their capture begins inside the call) fork.
    assert forks["before"] == 0 and forks["beside"] >= 12, forks
    # The kernels writing an input (one in place; a graph replay) began
    # after the input hashes beside them ended.
    assert re.search(r"updates True", out["beside"]), out["beside"]
    assert re.search(r"count True", out["beside"]), out["beside"]
    assert re.search(r"updates none", out["before"]), out["before"]
    for pattern in (r"replays (\d+)", r"returned (\w+)"):
        assert len({re.search(pattern, o).group(1) for o in out.values()}) == 1, out
    assert int(re.search(r"replays (\d+)", out["beside"]).group(1)) >= 4, out["beside"]

    def hashes(trace: Path) -> list[tuple]:
        # What a fresh buffer held before its first launch depends on how
        # long the recorder kept other tensors alive: only the hashes of
        # the inputs, of what launches read, and of what they wrote count.
        return [
            (r["type"], r["graph"], r["name"], r["hash"])
            if r["type"] == "input"
            else (
                r["type"],
                r["kernel"],
                [(a["access"] == "in" and a.get("pre"), a.get("post")) for a in r["args"]],
            )
            for r in dump(trace)
            if r["type"] in ("input", "launch")
        ]

    beside, before = hashes(tmp_path / "beside.msgpack"), hashes(tmp_path / "before.msgpack")
    assert len(beside) == len(before) > 40
    assert beside == before
    inputs = [h for h in beside if h[0] == "input"]
    assert len(inputs) >= 20 and all(h[3] is not None for h in inputs), inputs
    assert diff(tmp_path / "beside.msgpack", tmp_path / "before.msgpack")[0] == 0


def test_a_user_triton_kernel_called_from_a_compiled_function_is_rerun_alone(
    run_program, tmp_path: Path
) -> None:
    # Its float atomic adds sum 100,000 values into 64 bins in whatever
    # order the blocks run: rerun alone, it gives other bits.
    run_program("user_triton_compiled.py", "t.msgpack")
    captured = [r for r in dump(tmp_path / "t.msgpack") if r["type"] == "capture"]
    kernels = {r["seq"]: r["kernel"] for r in launches(tmp_path / "t.msgpack")}
    seqs = [r["seq"] for r in captured if "scatter_add" in kernels.get(r["seq"], "")]
    assert seqs, (captured, kernels)
    alone = repro(tmp_path / "t.msgpack", seqs[0], tmp_path / "repro", 10)
    assert alone.returncode == 1, alone.stdout + alone.stderr
    assert "the kernel alone is nondeterministic" in alone.stdout, alone.stdout

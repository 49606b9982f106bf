"""What the recorder writes so that verdicts hold: host objects by value,
outputs read before written hashed as inputs, the wrapper's allocations,
outputs an op leaves unwritten, and the program's results at stop."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import tritontui
from conftest import diff, dump, launches
from tritontui import _access, _host, _unwritten
from tritontui.hooks import aten as aten_hooks


def test_a_generator_is_recorded_by_its_state_not_its_address() -> None:
    a, b = torch.Generator().manual_seed(7), torch.Generator().manual_seed(7)
    assert _host.host_value(a) == _host.host_value(b)
    assert "0x" not in _host.host_value(a) and "seed=7" in _host.host_value(a)
    torch.randint(0, 9, (3,), generator=b)
    assert _host.host_value(a) != _host.host_value(b), "a generator that drew is another value"


def test_identities_are_recorded_by_type_and_data_by_repr() -> None:
    class Handle:
        pass

    assert _host.host_value(Handle()).startswith("<object ")
    assert "0x" not in _host.host_value(Handle())
    assert _host.host_value(torch.float32) == "torch.float32"
    assert _host.host_value([4, 8]) == "[4, 8]"
    assert _host.host_value(torch.device("cpu")) == "device(type='cpu')"


def test_an_output_read_before_it_is_written_is_read_and_written() -> None:
    accumulate = "{ atomic_add_vec<float, 2, 1>(out_ptr0, tmp1, tmp2); out_ptr1[x0] = tmp3; }"
    assert _access.cpp_output_access(accumulate, "out_ptr0") == "inout"
    assert _access.cpp_output_access(accumulate, "out_ptr1") == "out"
    scratch = "{ tmp0.store(in_out_ptr0 + x0); auto t = in_out_ptr0[x0]; }"
    assert _access.cpp_output_access(scratch, "in_out_ptr0") == "out"
    compare = "{ auto t = out_ptr0[x0] == 1; out_ptr0[x0] = 2; }"
    assert _access.cpp_output_access(compare, "out_ptr0") == "inout"
    assert _access.triton_output_access("x = tl.load(in_out_ptr0 + i)\n", "in_out_ptr0") == "inout"
    assert _access.triton_output_access("tl.store(out_ptr0 + i, x)\n", "out_ptr0") == "out"
    assert _access.triton_output_access("tl.atomic_add(out_ptr0 + i, x)\n", "out_ptr0") == "inout"
    # Whole functions, as Triton keeps them: the header names every
    # parameter and reads none.
    header = "def k(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):\n"
    assert (
        _access.triton_output_access(header + "    tl.store(out_ptr0 + i, x)\n", "out_ptr0")
        == "out"
    )
    wrapped = "@triton.jit\ndef k(\n    in_out_ptr0,\n    in_ptr0,\n    XBLOCK: tl.constexpr,\n):\n"
    body = "    x = tl.load(in_out_ptr0 + i)\n    tl.store(in_out_ptr0 + i, x)\n"
    assert _access.triton_output_access(wrapped + body, "in_out_ptr0") == "inout"
    assert _access.triton_output_access(wrapped + body[body.index("\n") + 1 :], "in_out_ptr0") == (
        "out"
    )


def test_a_triton_kernel_s_pure_output_is_written_only() -> None:
    # What the Triton hook reads: the jitted function's source, header and all.
    triton = pytest.importorskip("triton")
    tl = pytest.importorskip("triton.language")
    from tritontui.hooks.triton import argument_access

    @triton.jit
    def kernel(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
        x0 = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
        tl.store(out_ptr0 + x0, tl.load(in_ptr0 + x0) * 2)

    access = [argument_access(n, set(), kernel.src) for n in ("in_ptr0", "out_ptr0")]
    assert access == ["in", "out"], kernel.src
    # A buffer Inductor says the kernel mutates keeps what it does not
    # store (a scatter into an input): its old bytes are read too.
    assert argument_access("out_ptr0", {"out_ptr0"}, kernel.src) == "inout"


def test_a_recording_holds_what_the_verdict_needs(run_program, tmp_path: Path) -> None:
    run_program("accumulate_into_input.py", "a.msgpack")
    trace = tmp_path / "a.msgpack"
    recorded = launches(trace)
    kernel = next(r for r in recorded if r["kernel"].startswith("cpp_fused_index_add"))
    acc = next(a for a in kernel["args"] if a["name"] == "out_ptr0")
    # The kernel adds into the input's own bytes: they are hashed before.
    assert acc["access"] == "inout" and acc["pre"] is not None, acc
    assert any(r["kernel"] == "empty_strided_cpu" for r in recorded), "the wrapper's allocation"
    host = [
        a["value"]
        for r in recorded
        for a in r["args"]
        if isinstance(a.get("value"), str) and a["value"].startswith("<")
    ]
    assert host, "the generator and the profiler handle are recorded"
    assert all("0x" not in v for v in host), host
    assert any(v.startswith("<torch.Generator device=cpu seed=3 state=") for v in host), host
    results = [r for r in dump(trace) if r["type"] == "result"]
    assert any(r["ptr"] == acc["ptr"] and r["hash"] == acc["post"] for r in results), (acc, results)


def test_what_printing_an_argument_does_is_not_recorded(tmp_path: Path) -> None:
    # A sparse tensor is recorded by its repr, and printing it reads its
    # values (tolist): that is the recorder's work, not the program's.
    sparse = torch.eye(3).to_sparse()
    with tritontui.record(tmp_path / "a.msgpack"):
        sparse.clone()
    kernels = [r["kernel"] for r in launches(tmp_path / "a.msgpack")]
    assert kernels == ["aten::clone"], kernels
    assert dump(tmp_path / "a.msgpack")[-1]["reason"] == "stopped", "no internal error"
    # And the next recording sees each op once.
    x = torch.randn(8)
    with tritontui.record(tmp_path / "b.msgpack"):
        x * 2
    assert [r["kernel"] for r in launches(tmp_path / "b.msgpack")] == ["aten::mul.Tensor"]


def test_an_ops_results_are_named_by_its_schema(tmp_path: Path) -> None:
    x = torch.randn(4, 3)
    with tritontui.record(tmp_path / "a.msgpack"):
        torch.max(x, dim=0)
        torch.sin(x)
    names = {r["kernel"]: [a["name"] for a in r["args"]] for r in launches(tmp_path / "a.msgpack")}
    assert names["aten::max.dim"][-2:] == ["values", "indices"], names
    assert names["aten::sin"][-1] == "result", names


def test_attention_without_dropout_leaves_its_random_state_unwritten() -> None:
    arguments = [("query", "in", None), ("dropout_p", "in", 0.0)]
    op = "_scaled_dot_product_efficient_attention"
    assert _unwritten.unwritten_outputs(op, arguments) == ("philox_seed", "philox_offset")
    with_dropout = [("query", "in", None), ("dropout_p", "in", 0.1)]
    assert _unwritten.unwritten_outputs(op, with_dropout) == ()
    assert _unwritten.unwritten_outputs("mm", arguments) == ()


def test_attention_called_without_its_trailing_defaults_leaves_its_random_state_unwritten() -> None:
    """torch hands a dispatch mode an op's arguments without the trailing
    ones that hold their defaults: SDPA's cudnn call without ``is_causal``
    comes as five, ``dropout_p`` left out. Its random state is still
    unwritten (run on an H200: two blocks of one process called it a
    nondeterministic kernel while its schema's default was not read)."""
    op = torch.ops.aten._scaled_dot_product_cudnn_attention.default
    results = ["output", "logsumexp", "philox_seed", "philox_offset"]
    q = torch.empty(0)
    trailing_defaults_left_out = (q, q, q, None, True)
    assert aten_hooks.result_codes(op, trailing_defaults_left_out, {}, results, b"oooo") == b"ooaa"
    with_dropout = (q, q, q, None, True, 0.1)
    assert aten_hooks.result_codes(op, with_dropout, {}, results, b"oooo") == b"oooo"
    as_keyword = aten_hooks.result_codes(
        op, trailing_defaults_left_out, {"dropout_p": 0.1}, results, b"oooo"
    )
    assert as_keyword == b"oooo"


def test_eager_ops_are_recorded_with_their_arguments_and_ops_on_no_tensor_are_not(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.msgpack"
    x, w = torch.ones(4), torch.full((4,), 2.0)
    with tritontui.record(path), torch.profiler.record_function("a profiler range"):
        x.mul_(w)
        torch.cat([x, w]).sum().item()
    recorded = launches(path)
    names = [r["kernel"] for r in recorded]
    # The profiler range's enter and exit ops touch no tensor.
    assert not [n for n in names if "record_function" in n], names
    mul = next(r for r in recorded if r["kernel"] == "aten::mul_.Tensor")
    assert [(a["name"], a["access"]) for a in mul["args"]] == [("self", "inout"), ("other", "in")]
    self_arg = mul["args"][0]
    assert self_arg["pre"] == f"{tritontui.hash_tensor(torch.ones(4)):#018x}", "hashed before"
    assert self_arg["post"] == f"{tritontui.hash_tensor(x):#018x}", "and after it"
    cat = next(r for r in recorded if r["kernel"] == "aten::cat")
    # A tensor list is spread, one argument per tensor; the new tensor is
    # the op's named result.
    assert [a["name"] for a in cat["args"]][:2] == ["tensors[0]", "tensors[1]"], cat["args"]
    assert cat["args"][-1]["name"] == "result" and cat["args"][-1]["access"] == "out"
    item = next(r for r in recorded if r["kernel"] == "aten::_local_scalar_dense")
    assert item["args"][0]["access"] == "in"


def test_hashes_taken_from_the_data_flow_are_the_hashes_themselves(
    run_program, tmp_path: Path
) -> None:
    # Inside a graph call, a view's bytes before a launch are known from
    # the launch that last touched them or from the call's entry: the
    # trace marks them inherited and the reader fills them in. Recorded
    # again hashing every input, each inherited hash is the hash itself.
    assert_inherited_hashes_are_exact(run_program, tmp_path, "cpu")


def recorded_both_ways(run_program, tmp_path: Path, program: str, device: str) -> list[dict]:
    """Records ``program`` on ``device`` with inherited hashes and hashing
    every input, checks that every inherited hash is the hash itself (and
    every other hash the same), and returns the first trace's launches,
    each argument with how many hashes were inherited in all."""
    run_program(program, "inherited.msgpack", device)
    run_program(
        program,
        "hashed.msgpack",
        device,
        env={"TRITONTUI_HASH_EVERY_INPUT": "1"},
    )
    inherited, hashed = (
        launches(tmp_path / "inherited.msgpack"),
        launches(tmp_path / "hashed.msgpack"),
    )
    assert [r["kernel"] for r in inherited] == [r["kernel"] for r in hashed]
    for a, b in zip(inherited, hashed, strict=True):
        for x, y in zip(a["args"], b["args"], strict=True):
            assert not y.get("inherited"), y
            if x.get("inherited"):
                assert x["pre"] is not None and x["pre"] == y["pre"], (a["kernel"], x, y)
            if "dtype" in x and x["access"] != "out":
                assert x["post"] == y["post"], (a["kernel"], x, y)
    status, _ = diff(tmp_path / "inherited.msgpack", tmp_path / "hashed.msgpack")
    assert status == 0
    return inherited


def inherited_args(recorded: list[dict]) -> int:
    """How many hashes before a launch the trace takes from the data flow."""
    return sum(1 for r in recorded for x in r["args"] if x.get("inherited"))


def assert_inherited_hashes_are_exact(run_program, tmp_path: Path, device: str) -> None:
    """Records ``views_in_a_graph.py`` on ``device`` with inherited hashes
    and hashing every input, and compares the two traces."""
    inherited = recorded_both_ways(run_program, tmp_path, "views_in_a_graph.py", device)
    taken = inherited_args(inherited)
    assert taken >= 15, taken
    # In place: the updated input's hash before its kernel is the entry's.
    update = next(r for r in inherited if "copy_" in r["kernel"])
    assert any(x.get("inherited") and x["access"] == "in" for x in update["args"]), update
    # A transposed view is another view of the bytes: hashed.
    second_mm = [r for r in inherited if r["kernel"] == "aten::mm.out"][1]
    assert not any(x.get("inherited") for x in second_mm["args"]), second_mm
    # A view of another shape reading the same bytes in the same order is
    # not: the 3-D input, known from the call's entry, read as a matrix.
    entry = next(
        r
        for r in dump(tmp_path / "inherited.msgpack")
        if r["type"] == "input" and r["shape"] == [2, 16, 32]
    )
    as_matrix = [
        x
        for r in inherited
        for x in r["args"]
        if x.get("ptr") == entry["ptr"] and x.get("shape") == [32, 32]
    ]
    assert len(as_matrix) == 3 and all(x["inherited"] for x in as_matrix), as_matrix


def test_an_optimizer_step_takes_its_hashes_from_the_data_flow(run_program, tmp_path: Path) -> None:
    # Inside an optimizer's step() every write is a recorded op, so a view
    # one op left is known to the next: its hash before is inherited.
    # Recorded again hashing every input, each is the hash itself.
    assert_optimizer_steps_inherit(run_program, tmp_path, "cpu")


def assert_optimizer_steps_inherit(run_program, tmp_path: Path, device: str) -> None:
    """Records ``optimizer_steps.py`` on ``device`` both ways and checks
    what its steps inherited."""
    recorded = recorded_both_ways(run_program, tmp_path, "optimizer_steps.py", device)
    assert inherited_args(recorded) >= 20, inherited_args(recorded)
    # Bytes written with dispatch modes kept out (no op recorded) are not
    # known any more: the parameter's next read is hashed, and its hash
    # is of what that write left.
    last = [r for r in recorded if r["kernel"] == "aten::add_.Tensor"][-1]
    parameter = last["args"][0]
    assert not parameter["inherited"], last
    left = tritontui.hash_tensor(torch.tensor([5.0, 6.0, 7.0, 8.0]))
    assert parameter["pre"] == f"{left:#018x}", last

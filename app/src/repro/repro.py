"""Re-runs one recorded launch on its own, written by `tritontui repro`.

Reads launch.json (the kernel, its arguments, its launch config, the
versions it was recorded with), kernel.cpp or kernel.py (a C++ or Triton
kernel's source as Inductor generated it, or a user-written Triton
kernel's function) and values.safetensors (its tensors captured before and
after the launch in run A; b.safetensors, when given, run B's), runs the
kernel RUNS times, each on fresh copies of the captured inputs, and
prints whether its outputs are bitwise identical across the repetitions
and how they compare with the recorded outputs.

    python repro.py [--runs K]

Exit status: 0 the outputs are identical in every repetition, 1 they are
not (the kernel alone is nondeterministic), 2 it cannot run here (it
cannot be built, or it fails)."""

from __future__ import annotations

import argparse
import ast
import json
import re
import struct
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
DTYPES = {
    "F64": torch.float64,
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I64": torch.int64,
    "I32": torch.int32,
    "I16": torch.int16,
    "I8": torch.int8,
    "U8": torch.uint8,
    "BOOL": torch.bool,
}


def refuse(message: str) -> None:
    print(f"repro: {message}", file=sys.stderr)
    sys.exit(2)


def read_safetensors(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of a safetensors file, by its documented layout."""
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    body = data[8 + length :]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if entry["dtype"] not in DTYPES:
            refuse(f"{path.name}: {name} has dtype {entry['dtype']}, which this script cannot load")
        start, end = entry["data_offsets"]
        raw = torch.frombuffer(bytearray(body[start:end]), dtype=torch.uint8)
        tensors[name] = raw.view(DTYPES[entry["dtype"]]).reshape(entry["shape"])
    return tensors


def host(value: object) -> object:
    """A scalar as the trace records it, made the object again where its
    text says which: a dtype or layout (``torch.float32``), a device
    (``device(type='cpu')``), a list or tuple of numbers."""
    if not isinstance(value, str):
        return value
    if value.startswith("torch.") and hasattr(torch, value[6:]):
        return getattr(torch, value[6:])
    device = re.fullmatch(r"device\(type='(\w+)'(?:, index=(\d+))?\)", value)
    if device:
        kind, index = device[1], device[2]
        return torch.device(kind) if index is None else torch.device(kind, int(index))
    if value[:1] in "[(":
        return ast.literal_eval(value)
    return value


def fresh_arguments(launch: dict, captured: dict[str, torch.Tensor]) -> list:
    """The launch's arguments: each tensor a new one of its recorded layout
    on its recorded device holding its captured value before the launch
    (zeros for a pure output), each scalar as recorded."""
    device = torch.device("cuda", launch["device"]) if launch["device"] >= 0 else "cpu"
    args = []
    for i, arg in enumerate(launch["args"]):
        if "value" in arg:
            args.append(host(arg["value"]))
            continue
        dtype = getattr(torch, arg["dtype"])
        t = torch.empty_strided(arg["shape"], arg["stride"], dtype=dtype, device=device)
        before = captured.get(f"{i}.pre")
        if before is None:
            t.zero_()
        else:
            t.copy_(before)
        args.append(t)
    return args


def cpp_kernel(launch: dict):
    """The recorded C++ kernel, compiled as Inductor compiles it."""
    from torch._inductor.codecache import CppPythonBindingsCodeCache

    source = (HERE / "kernel.cpp").read_text()
    # Inductor appended its Python bindings to the kernel; they are made again.
    source = source.split("\n// Python bindings to call kernel():")[0]
    argtypes = [arg["type"] for arg in launch["args"]]
    function = CppPythonBindingsCodeCache.load_pybinding(argtypes, source)
    return lambda args: function(*args)


def triton_kernel(launch: dict):
    """The recorded Triton kernel: Inductor's generated module loaded from
    kernel.py, its autotuner held to the recorded config."""
    import importlib.util

    import triton
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    if triton.__version__ != launch["triton"]:
        refuse(f"recorded with triton {launch['triton']}, this is triton {triton.__version__}")
    if launch["device"] < 0 or not torch.cuda.is_available():
        refuse("a Triton kernel needs a CUDA device")
    torch.cuda.set_device(launch["device"])
    spec = importlib.util.spec_from_file_location("kernel", HERE / "kernel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = [v for v in vars(module).values() if isinstance(v, CachingAutotuner)]
    named = [v for v in found if v.inductor_meta.get("kernel_name") == launch["kernel"]]
    if len(named or found) != 1:
        refuse(f"kernel.py defines {len(found)} Triton kernels, none named {launch['kernel']}")
    autotuner = (named or found)[0]
    config = dict(launch["config"])
    warps, stages = config.pop("num_warps", None), config.pop("num_stages", None)
    same = [
        c
        for c in autotuner.configs
        if c.kwargs == config and warps in (None, c.num_warps) and stages in (None, c.num_stages)
    ]
    autotuner.configs = same[:1] or [triton.Config(config, num_warps=warps, num_stages=stages)]
    autotuner.precompile()
    stream = torch.cuda.current_stream().cuda_stream
    return lambda args: autotuner.run(*args, stream=stream)


def user_triton_kernel(launch: dict):
    """A user-written Triton kernel: the jitted function as recorded (its
    source alone, its decorators dropped), jitted again in a module of its
    own with Triton's usual imports, launched on the recorded grid with
    the recorded constants; on the CPU through Triton's interpreter, as
    it was recorded."""
    import importlib.util
    import os
    import textwrap

    if launch["device"] < 0:
        os.environ["TRITON_INTERPRET"] = "1"  # read when a kernel is jitted
    import triton

    if triton.__version__ != launch["triton"]:
        refuse(f"recorded with triton {launch['triton']}, this is triton {triton.__version__}")
    if launch["device"] >= 0:
        if not torch.cuda.is_available():
            refuse("a Triton kernel recorded on a GPU needs a CUDA device")
        torch.cuda.set_device(launch["device"])
    tree = ast.parse(textwrap.dedent((HERE / "kernel.py").read_text()))
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    # Inductor names a user's kernel called from compiled code uniquely
    # (`scatter_add_0` for `scatter_add`).
    names = {launch["kernel"], re.sub(r"_\d+$", "", launch["kernel"])}
    found = [n for n in functions if n.name in names]
    if not found and len(functions) == 1:
        found = functions
    if not found:
        refuse(f"kernel.py holds no function named {launch['kernel']}")
    found[0].decorator_list = []
    module_path = HERE / "user_kernel.py"
    module_path.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        + ast.unparse(found[0])
        + "\n"
    )
    spec = importlib.util.spec_from_file_location("user_kernel", module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel = getattr(module, found[0].name)
    grid = tuple(launch["grid"])
    return lambda args: kernel[grid](*args, **launch["config"])


def aten_op(launch: dict):
    """The recorded aten op, called with its arguments by name."""
    namespace, _, name = launch["kernel"].partition("::")
    base, _, overload = name.partition(".")
    op = getattr(getattr(getattr(torch.ops, namespace), base), overload or "default")
    given = {a.name for a in op._schema.arguments}

    def call(args: list) -> list:
        named = {a["name"]: v for a, v in zip(launch["args"], args, strict=True)}
        result = op(**{k: v for k, v in named.items() if k in given})
        return list(result) if isinstance(result, (tuple, list)) else [result]

    return call


def bits(t: torch.Tensor) -> torch.Tensor:
    """The tensor's bytes, for a bitwise comparison (NaN equals NaN, -0 is
    not +0)."""
    return t.contiguous().reshape(-1).view(torch.uint8)


def describe(got: torch.Tensor, recorded: torch.Tensor) -> str:
    if torch.equal(bits(got), bits(recorded.reshape(got.shape))):
        return "the same bits"
    differ = (bits(got) != bits(recorded.reshape(got.shape))).sum().item()
    words = f"{differ} bytes differ"
    if got.is_floating_point():
        finite = torch.isfinite(got) & torch.isfinite(recorded.reshape(got.shape))
        gap = (got.double() - recorded.reshape(got.shape).double()).abs()[finite]
        if gap.numel():
            words += f", max abs {gap.max().item():.3e}"
    return words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=None, help="repetitions")
    options = parser.parse_args()
    launch = json.loads((HERE / "launch.json").read_text())
    if torch.__version__ != launch["torch"]:
        refuse(f"recorded with torch {launch['torch']}, this is torch {torch.__version__}")
    runs = options.runs or launch["runs"]
    captured = read_safetensors(HERE / "values.safetensors")
    b_file = HERE / "b.safetensors"
    in_b = read_safetensors(b_file) if b_file.exists() else {}
    builders = {
        "cpp": cpp_kernel,
        "aten": aten_op,
        "triton": triton_kernel,
        # Called from compiled code, a user's kernel is in Inductor's module.
        "user-triton": (
            triton_kernel if launch.get("launcher") == "inductor" else user_triton_kernel
        ),
    }
    if launch["backend"] not in builders:
        refuse(f"reproducing a {launch['backend']} kernel is not built yet")
    try:
        kernel = builders[launch["backend"]](launch)
    except Exception as e:  # it cannot run here: not the kernel's nondeterminism
        refuse(f"{launch['kernel']} cannot be built here: {type(e).__name__}: {e}")
    # Each output by the key of its recorded value after, and its place.
    outputs = [
        (f"{i}.post", i)
        for i, arg in enumerate(launch["args"])
        if "value" not in arg and arg["access"] in ("out", "inout")
    ]
    results: list[dict[str, torch.Tensor]] = []
    for _ in range(runs):
        args = fresh_arguments(launch, captured)
        try:
            returned = kernel(args)
        except Exception as e:  # it cannot run here: not the kernel's nondeterminism
            refuse(f"{launch['kernel']} failed: {type(e).__name__}: {e}")
        got = {key: args[i].cpu() for key, i in outputs}
        if launch["backend"] == "aten":
            first = len(launch["args"]) - len(launch["results"])
            for j, value in enumerate(returned[: len(launch["results"])]):
                got[f"{first + j}.post"] = value.cpu()
        results.append(got)
    names = {f"{i}.post": a["name"] for i, a in enumerate(launch["args"])}
    print(f"{launch['kernel']} (launch {launch['seq']} of {launch['trace']}), {runs} runs")
    nondeterministic = False
    for key in results[0]:
        distinct: list[torch.Tensor] = []
        for got in results:
            if not any(torch.equal(bits(got[key]), bits(d)) for d in distinct):
                distinct.append(got[key])
        nondeterministic |= len(distinct) > 1
        plural = "s" if len(distinct) > 1 else ""
        line = f"  {names.get(key, key)}: {len(distinct)} distinct result{plural}"
        for run, recorded in (("A", captured), ("B", in_b)):
            if key in recorded:
                line += f"; against run {run}: {describe(results[0][key], recorded[key])}"
        print(line)
    if nondeterministic:
        print("the kernel alone is nondeterministic: its outputs differ between repetitions")
    else:
        print("the kernel alone gave the same bits in every repetition")
    sys.exit(1 if nondeterministic else 0)


if __name__ == "__main__":
    main()

"""Records the corpus: each program twice, in two processes, into
``tests/corpus/NAME/{a,b}.msgpack`` with the fingerprints of both runs'
results in ``fingerprints.json``. Run B passes ``--variant`` to programs
whose pair differs on purpose (see VARIANTS); the programs of
IN_ONE_PROCESS record both runs in one process, in two ``record()``
blocks. ``expected.json`` is written
by hand from the fingerprints and what the program does.

    python tests/corpus/record.py [NAME ...] [--until differ|equal --tries N]
    python tests/corpus/record.py --gpu [NAME ...]   # the gpu_* programs

Programs named ``gpu_*`` need CUDA; without NAMEs, ``--gpu`` records
them all and a plain call records the others.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
# Programs whose run B is given --variant.
VARIANTS = {
    "weight_bump",
    "recompile_batch",
    "config_code",
    "config_fp_contract",
    "dynamic_against_static",
    "grad_accumulation",
    "attention_refactor",
    "config_after_start",
    "planted_rounding",
    "planted_eps",
    "eager_against_compiled",
    "dropout_eager_against_compiled",
    "autocast_bf16",
    "autocast_bf16_step",
    "gpu_eager_against_compiled",
    "gpu_config_after_start",
    "gpu_planted_rounding",
    "gpt_eager_against_compiled",
    "gpu_gpt_eager_against_compiled",
    "batch_row0",
    "row_bump",
    "gpu_batch_row0",
    "gpu_batch_rmsnorm_split",
    "gpu_batch_encoder_layer",
    "batch_encoder_layer",
    "autocast_inference_norm",
    "inference_norm_against_compiled",
    "batch_reduction_split",
    "batch_variant_absorbed",
    "batch_request_17",
    "batch_invariant",
    "batch_gpt_request_5",
    "allreduce_ranks",
    "fsdp_ranks",
    "compiled_ddp_ranks",
    "fingerprint_ranks",
    "p2p_ranks",
    "gpu_host_batch",
    "gpu_ddp_ranks",
    "gpu_compiled_ddp_ranks",
    "gpu_fsdp_ranks",
    "gpu_autotune_noise",
    "settings_threads",
    "dropout_seed",
    "gpu_tf32_switch",
    "gpu_attention_seed",
    "gpu_graphed_against_ungraphed",
    "gpu_graph_output_kept",
    "gpu_graph_shared_pool",
    "raised_midway",
}


# Programs that also record a reference run (in float64, eagerly) into
# ``reference.msgpack``, for ``diff --reference``.
REFERENCED = {
    "eager_against_compiled",
    "config_fp_contract",
    "grad_accumulation",
    "attention_refactor",
    "planted_rounding",
    "planted_eps",
    "gpu_planted_rounding",
    "gpt_eager_against_compiled",
    "gpu_gpt_eager_against_compiled",
}


# Programs that record both runs of their pair in one process, in two
# ``record()`` blocks (``--out`` and ``--out-b``).
IN_ONE_PROCESS = {
    "blocks_identical",
    "blocks_weight_bump",
    "blocks_chained",
    "gpu_attention_blocks",
}


def record_blocks(name: str, out: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Records NAME's two blocks in one process; both runs' fingerprints."""
    with tempfile.TemporaryDirectory() as tmp:
        fingerprint = Path(tmp) / "fingerprint.json"
        command = [sys.executable, str(PROGRAMS / f"{name}.py"), "--out", str(out / "a.msgpack")]
        command += ["--out-b", str(out / "b.msgpack"), "--fingerprint", str(fingerprint)]
        subprocess.run(command, check=True, cwd=PROGRAMS)
        both = json.loads(fingerprint.read_text())
        return both["a"], both["b"]


def record_run(
    name: str, trace: Path, variant: bool, float64: bool = False
) -> tuple[dict[str, str], dict[str, float] | None, dict[str, float] | None]:
    """Records one run (in float64, the reference run, when asked); its
    fingerprint, each result's error against a float64 run when the
    program takes one, and what it confirmed by running its suspected
    kernels alone when it does."""
    with tempfile.TemporaryDirectory() as tmp:
        fingerprint = Path(tmp) / "fingerprint.json"
        command = [sys.executable, str(PROGRAMS / f"{name}.py"), "--out", str(trace)]
        command += ["--fingerprint", str(fingerprint)] + (["--variant"] if variant else [])
        command += ["--float64"] if float64 else []
        subprocess.run(command, check=True, cwd=PROGRAMS)
        fp64, confirmed = Path(f"{fingerprint}.fp64"), Path(f"{fingerprint}.confirmed")
        errors = json.loads(fp64.read_text()) if fp64.exists() else None
        found = json.loads(confirmed.read_text()) if confirmed.exists() else None
        return json.loads(fingerprint.read_text()), errors, found


def record_pair(name: str) -> bool:
    """Records NAME's pair; returns whether the results differ."""
    out = HERE / name
    out.mkdir(exist_ok=True)
    fp64 = confirmed = None
    if name in IN_ONE_PROCESS:
        a, b = record_blocks(name, out)
    else:
        a, fp64_a, _ = record_run(name, out / "a.msgpack", variant=False)
        b, fp64_b, confirmed = record_run(name, out / "b.msgpack", variant=name in VARIANTS)
        if fp64_a is not None and fp64_b is not None:
            fp64 = {"a": fp64_a, "b": fp64_b}
        if name in REFERENCED:
            record_run(name, out / "reference.msgpack", variant=False, float64=True)
    differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    fingerprints = {"a": a, "b": b, "differ": differ}
    if fp64 is not None:
        # Each result's error against the program in float64 (relative and
        # root mean square, with its element count and dtype: same()'s rule).
        fingerprints["fp64_error"] = fp64
    if confirmed is not None:
        # Each suspected kernel run alone by run B's program, unrecorded.
        fingerprints["confirmed"] = confirmed
    (out / "fingerprints.json").write_text(
        json.dumps(fingerprints, indent=1, sort_keys=True) + "\n"
    )
    sizes = sum(p.stat().st_size for p in out.glob("*.msgpack"))
    print(
        f"{name}: results {'differ: ' + ', '.join(differ) if differ else 'equal'} ({sizes} bytes)"
    )
    return bool(differ)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="programs (default: all)")
    parser.add_argument(
        "--until", choices=("differ", "equal"), help="re-record until the results do"
    )
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument("--gpu", action="store_true", help="the gpu_* programs by default")
    args = parser.parse_args()
    names = args.names or sorted(
        p.stem for p in PROGRAMS.glob("[!_]*.py") if p.stem.startswith("gpu_") == args.gpu
    )
    for name in names:
        for _ in range(args.tries if args.until else 1):
            differ = record_pair(name)
            if args.until is None or differ == (args.until == "differ"):
                break


if __name__ == "__main__":
    main()

//! `tritontui repro TRACE --launch N -o DIR`: one recorded launch made a
//! standalone reproducer, from its captured values and the trace alone
//! (no Inductor cache, no original program): `DIR/repro.py` (the same
//! script for every launch, `repro.py` here), `DIR/launch.json` (the
//! kernel, its arguments with their layouts and scalar values, the
//! versions it was recorded with), `DIR/values.safetensors` (its capture),
//! `DIR/b.safetensors` (run B's, when given) and the kernel's source:
//! `DIR/kernel.cpp` for a C++ kernel, `DIR/kernel.py` (the module Inductor
//! generated) for a Triton kernel, run with its recorded config, or (the
//! jitted function as the user wrote it) for a user-written Triton kernel,
//! run on its recorded grid with its recorded constants.

use anyhow::{Context, bail};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use tritontui_trace::{ArgRef, Scalar, Trace};

/// The script every reproducer runs.
const SCRIPT: &str = include_str!("repro.py");

/// Repetitions the script runs by default.
pub const DEFAULT_RUNS: u32 = 10;

/// Writes the reproducer of launch `seq` of the trace at `path` into
/// `dir`, with run B's capture of its aligned launch when `against` is
/// given; returns the script's path.
pub fn write(
    path: &Path,
    seq: u64,
    dir: &Path,
    runs: u32,
    against: Option<&Path>,
) -> anyhow::Result<PathBuf> {
    let trace = Trace::open(path).with_context(|| path.display().to_string())?;
    let launch = trace
        .launches
        .iter()
        .find(|l| l.seq == seq)
        .with_context(|| format!("{}: no launch {seq}", path.display()))?;
    let kernel = trace.kernel_of(launch);
    if !["cpp", "aten", "triton", "user-triton"].contains(&kernel.backend.as_str()) {
        bail!(
            "{}: launch {seq} is a {} kernel; repro builds Inductor's Triton and C++ kernels, user-written Triton kernels and aten ops",
            path.display(),
            kernel.backend
        );
    }
    if kernel.meta.get("wrapper") == Some(&tritontui_trace::Scalar::Str("cpp".into())) {
        bail!(
            "{}: launch {seq} ran from a C++ wrapper (cpp_wrapper or AOTInductor), whose kernels \
             repro cannot rebuild; record the program without cpp_wrapper to rebuild it",
            path.display()
        );
    }
    let capture = trace
        .captured_values
        .iter()
        .find(|c| c.seq == seq)
        .with_context(|| {
            format!(
                "{}: launch {seq} was not captured (record it with --capture {seq})",
                path.display()
            )
        })?;
    let folder = |p: &Path| p.parent().unwrap_or(Path::new("")).to_path_buf();
    let captured = folder(path).join(&capture.file);
    let mut args = Vec::new();
    for (i, arg) in trace.args_of(launch).enumerate() {
        let def = kernel.args.get(i);
        let (name, ty) = def.map_or((format!("arg{i}"), String::new()), |d| {
            (d.name.clone(), d.ty.clone())
        });
        let declared = def.map_or("in", |d| d.access.as_str());
        args.push(match arg {
            // A user-written kernel declares no outputs: what it wrote is
            // what this launch changed.
            ArgRef::Tensor(t) if kernel.backend == "user-triton" && t.written => json!({
                "name": name, "type": ty, "access": "inout",
                "dtype": t.layout.dtype, "shape": t.layout.shape, "stride": t.layout.stride,
            }),
            ArgRef::Tensor(t) => json!({
                "name": name, "type": ty, "access": declared,
                "dtype": t.layout.dtype, "shape": t.layout.shape, "stride": t.layout.stride,
            }),
            ArgRef::Scalar(value) => json!({
                "name": name, "type": ty, "access": declared, "value": scalar(value, path, &name)?,
            }),
        });
    }
    let results: Vec<&str> = kernel
        .args
        .iter()
        .map(|d| d.name.as_str())
        .filter(|n| n.starts_with("result"))
        .collect();
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let write = |name: &str, bytes: &[u8]| {
        let file = dir.join(name);
        std::fs::write(&file, bytes).with_context(|| format!("{}: cannot write", file.display()))
    };
    if kernel.backend != "aten" {
        let source = trace.source_of(kernel).with_context(|| {
            format!(
                "{}: the trace holds no source of {}",
                path.display(),
                kernel.name
            )
        })?;
        let file = if kernel.backend == "cpp" {
            "kernel.cpp"
        } else {
            "kernel.py"
        };
        write(file, source.text.as_bytes())?;
    }
    let config: serde_json::Map<String, Value> = kernel
        .config
        .iter()
        .map(|(key, value)| Ok((key.clone(), scalar(value, path, key)?)))
        .collect::<anyhow::Result<_>>()?;
    let copy = |from: &Path, name: &str| {
        std::fs::copy(from, dir.join(name))
            .with_context(|| format!("{}: cannot read", from.display()))
    };
    copy(&captured, "values.safetensors")?;
    if let Some(b_path) = against {
        let b = Trace::open(b_path).with_context(|| b_path.display().to_string())?;
        let b_seq = crate::values::aligned(&trace, &b, seq)?;
        let b_capture = b
            .captured_values
            .iter()
            .find(|c| c.seq == b_seq)
            .with_context(|| format!("{}: launch {b_seq} was not captured", b_path.display()))?;
        copy(&folder(b_path).join(&b_capture.file), "b.safetensors")?;
    }
    // A user's Triton kernel called from compiled code runs, as Inductor's
    // own do, through the autotuner of the module Inductor generated
    // (`inductor`); one launched eagerly through its jitted function (`jit`).
    let launcher = match kernel.backend.as_str() {
        "triton" => "inductor",
        "user-triton" if kernel.meta.contains_key("heuristic") => "inductor",
        "user-triton" => "jit",
        _ => "",
    };
    let description = json!({
        "kernel": kernel.name, "backend": kernel.backend, "launcher": launcher, "seq": seq,
        "trace": path.display().to_string(), "args": args, "results": results,
        "device": launch.device, "grid": launch.grid, "config": config,
        "torch": trace.header.torch, "triton": trace.header.triton, "runs": runs,
    });
    write(
        "launch.json",
        serde_json::to_string_pretty(&description)?.as_bytes(),
    )?;
    write("repro.py", SCRIPT.as_bytes())?;
    Ok(dir.join("repro.py"))
}

/// A scalar argument as JSON; a host object the script cannot rebuild
/// (a process group, a generator) is refused.
fn scalar(value: &Scalar, path: &Path, name: &str) -> anyhow::Result<Value> {
    Ok(match value {
        Scalar::None => Value::Null,
        Scalar::Bool(b) => json!(b),
        Scalar::Int(i) => json!(i),
        Scalar::UInt(u) => json!(u),
        Scalar::Float(f) => json!(f),
        Scalar::Str(text) if text.starts_with('<') => bail!(
            "{}: argument {name} is a host object ({text}) that repro cannot rebuild",
            path.display()
        ),
        Scalar::Str(text) => json!(text),
    })
}

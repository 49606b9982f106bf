//! Builds the native aten observer (observer/*.cpp) against
//! the torch that the Python building the extension imports, for the
//! `python` feature: the extension carries the library and loads it where
//! that torch version runs (src/python/aten_observer.rs). Without torch
//! (pip's isolated build), or where it does not compile, the extension
//! is built without it and records aten ops through a Python dispatch
//! mode, as it says at run time.
//!
//! `TRITONTUI_TORCH_PYTHON` names the Python to ask (else `PYO3_PYTHON`,
//! else `python3`); `TRITONTUI_NO_OBSERVER=1` builds without the observer.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The observer's sources: its callbacks, the reading of a claimed op's
/// values, and what they share.
const SOURCES: [&str; 2] = ["observer/aten_observer.cpp", "observer/values.cpp"];
const HEADER: &str = "observer/op.h";

/// What the build learned of the torch to build against.
struct Torch {
    /// `torch.__version__`'s release (`2.11.0`).
    version: String,
    /// Its package directory (include/, lib/).
    dir: PathBuf,
    /// `torch._C._GLIBCXX_USE_CXX11_ABI`.
    cxx11_abi: bool,
    /// The Python headers of the interpreter that imports it.
    python_include: PathBuf,
}

fn main() {
    for source in SOURCES.iter().chain([&HEADER]) {
        println!("cargo::rerun-if-changed={source}");
    }
    println!("cargo::rerun-if-env-changed=TRITONTUI_TORCH_PYTHON");
    println!("cargo::rerun-if-env-changed=TRITONTUI_NO_OBSERVER");
    println!("cargo::rerun-if-env-changed=PYO3_PYTHON");
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default());
    let built = if env::var_os("CARGO_FEATURE_PYTHON").is_none() {
        Err("the extension is built without its Python module".to_owned())
    } else if env::var("TRITONTUI_NO_OBSERVER").is_ok_and(|v| v == "1") {
        Err("the extension was built with TRITONTUI_NO_OBSERVER=1".to_owned())
    } else {
        find_torch().and_then(|torch| compile(&torch, &out).map(|library| (torch, library)))
    };
    let code = match built {
        Ok((torch, library)) => format!(
            "/// The observer library and the torch version it was built for.\n\
             pub(super) const BUILT: Result<(&[u8], &str), &str> = Ok((include_bytes!({:?}), {:?}));\n",
            library.display().to_string(),
            torch.version
        ),
        Err(why) => {
            if env::var_os("CARGO_FEATURE_PYTHON").is_some() {
                println!("cargo::warning=no native aten observer: {why}");
            }
            format!(
                "/// Why this build has no observer library.\n\
                 pub(super) const BUILT: Result<(&[u8], &str), &str> = Err({why:?});\n"
            )
        }
    };
    // A build script's own failure to write is the build's: nothing to fall back on.
    if let Err(e) = fs::write(out.join("aten_observer_library.rs"), code) {
        println!("cargo::error=cannot write the observer's library file: {e}");
    }
}

/// The torch the building Python imports, or why there is none.
fn find_torch() -> Result<Torch, String> {
    let python = env::var("TRITONTUI_TORCH_PYTHON")
        .or_else(|_| env::var("PYO3_PYTHON"))
        .unwrap_or_else(|_| "python3".to_owned());
    let script = "import os, sysconfig, torch\n\
                  print(torch.__version__.split('+')[0])\n\
                  print(os.path.dirname(torch.__file__))\n\
                  print(int(torch._C._GLIBCXX_USE_CXX11_ABI))\n\
                  print(sysconfig.get_paths()['include'])\n";
    let output = Command::new(&python)
        .args(["-c", script])
        .output()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    if !output.status.success() {
        return Err(format!("{python} cannot import torch"));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let [version, dir, abi, include] = lines[..] else {
        return Err(format!(
            "{python} described its torch in {} lines",
            lines.len()
        ));
    };
    Ok(Torch {
        version: version.to_owned(),
        dir: PathBuf::from(dir),
        cxx11_abi: abi == "1",
        python_include: PathBuf::from(include),
    })
}

/// Compiles the observer against `torch` into `out`; its path.
fn compile(torch: &Torch, out: &Path) -> Result<PathBuf, String> {
    let compiler = env::var("CXX").unwrap_or_else(|_| "c++".to_owned());
    let library = out.join("libtritontui_aten_observer.so");
    let include = torch.dir.join("include");
    let status = Command::new(&compiler)
        // NDEBUG as torch is built: some of its headers lay out classes
        // differently without it (RecordFunction's `inputs_valid_`).
        .args([
            "-std=c++17",
            "-O2",
            "-DNDEBUG",
            "-fPIC",
            "-shared",
            "-fvisibility=hidden",
            // at::parallel_for runs on torch's OpenMP threads only where
            // its header is compiled for OpenMP (ATen/ParallelOpenMP.h);
            // libgomp.so.1 is the one torch loaded (torch/lib's).
            "-fopenmp",
        ])
        .arg(format!(
            "-D_GLIBCXX_USE_CXX11_ABI={}",
            u8::from(torch.cxx11_abi)
        ))
        .arg(format!("-DTRITONTUI_TORCH_VERSION=\"{}\"", torch.version))
        .arg("-I")
        .arg(&include)
        .arg("-I")
        .arg(include.join("torch/csrc/api/include"))
        .arg("-I")
        .arg(&torch.python_include)
        .args(SOURCES)
        .arg("-L")
        .arg(torch.dir.join("lib"))
        .args(["-ltorch_cpu", "-lc10", "-ltorch_python", "-o"])
        .arg(&library)
        .status()
        .map_err(|e| format!("cannot run {compiler}: {e}"))?;
    if status.success() {
        Ok(library)
    } else {
        Err(format!(
            "{compiler} failed to compile {}",
            SOURCES.join(" and ")
        ))
    }
}

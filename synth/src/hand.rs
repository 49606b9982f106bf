//! Traces written by hand, launch by launch, for tests that need one
//! exact situation rather than a simulated program.

use std::io;
use tritontui_trace::{Access, ArgDef, ArgValue, Header, KernelDef, LaunchRecord, TraceWriter};

/// The header of a hand-made trace whose tensors are hashed.
pub fn hashed_header() -> Header {
    let mut header = Header::new("test");
    header.options.hash = "tthash64-v1".into();
    header
}

/// A tensor argument at `ptr` of layout `layout`, written by its launch
/// and hashed `pre` before it and `post` after.
pub fn hashed(layout: u64, ptr: u64, pre: u64, post: u64) -> ArgValue {
    ArgValue::tensor(layout, ptr, 1, Some(pre), Some(post))
}

/// Writes a C++ kernel named `name` whose arguments are named and accessed
/// as `defs` say, and launch `seq` of it on the host with `args`.
pub fn write_launch(
    w: &mut TraceWriter<Vec<u8>>,
    seq: u64,
    name: &str,
    defs: &[(&str, Access)],
    args: Vec<ArgValue>,
) -> io::Result<()> {
    let kernel = w.add_kernel(KernelDef {
        id: 0,
        name: name.into(),
        backend: "cpp".into(),
        args: defs
            .iter()
            .map(|&(name, access)| ArgDef {
                name: name.into(),
                ty: "float*".into(),
                access,
            })
            .collect(),
        source: None,
        meta: Default::default(),
        config: Default::default(),
    })?;
    w.launch(&LaunchRecord {
        seq,
        kernel,
        grid: vec![],
        stream: 0,
        device: -1,
        thread: 1,
        ts: 0,
        autotune: false,
        captured: None,
        module: None,
        args,
    })
}

//! The tritontui trace: record types, a streaming writer, and a reader that
//! loads a memory-mapped trace into compact tables.
//!
//! This crate needs neither Python nor CUDA. The format is specified in
//! `docs/trace-format.md`.

pub mod background;
#[cfg(feature = "python")]
mod describe;
pub mod format;
pub mod framing;
#[cfg(feature = "cuda")]
pub mod gpu;
pub mod hash;
pub mod procs;
#[cfg(feature = "python")]
mod python;
pub mod reader;
pub mod stats;
#[cfg(feature = "python")]
mod tensor_impl;
pub mod trace;
#[cfg(feature = "python")]
mod triton_hook;
pub mod writer;

pub use format::{
    Access, ArgDef, ArgValue, CallRecord, GraphDef, Header, InputRecord, KernelDef, LaunchRecord,
    LayoutDef, Record, ResultsRecord, Scalar, Stats, TensorArg,
};
pub use reader::{Next, RecordReader, TraceError};
pub use trace::{ArgRef, EarlyEnd, GraphInput, Kernel, Launch, LiveTensor, TensorRef, Trace};
pub use writer::TraceWriter;

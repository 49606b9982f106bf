//! The tritontui trace: record types, a streaming writer, and a reader that
//! loads a memory-mapped trace into compact tables, with the exact tensor
//! hash both sides agree on.
//!
//! This crate needs neither Python nor CUDA: the recorder writes with it
//! and the app reads with it. The format is specified in
//! `docs/trace-format.md`.

pub mod format;
pub mod framing;
pub mod hash;
pub mod known_views;
pub mod options;
pub mod reader;
pub mod samples;
pub mod span;
pub mod trace;
pub mod writer;

pub use format::{
    Access, ArgDef, ArgValue, CallRecord, CustomHashRecord, Distributed, GapRecord, GraphDef,
    Header, InputRecord, KernelDef, LaunchRecord, LayoutDef, ProcessGroupRecord, Record,
    ResultsRecord, Scalar, SettingsRecord, Stats, TensorArg, ValuesRecord,
};
pub use reader::{Next, RecordReader, TraceError};
pub use span::Span;
pub use trace::{
    ArgIndex, ArgRef, EarlyEnd, GraphCall, GraphInput, Kernel, Launch, LiveTensor, TensorRef, Trace,
};
pub use writer::TraceWriter;

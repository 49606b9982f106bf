//! Record types of trace format v1, as they appear on disk.
//!
//! A trace is a stream of MessagePack maps; the first key of every map is
//! `r`, whose string value names the record kind. `docs/trace-format.md` is
//! the normative description; these types follow it field for field.

mod args;
mod header;
mod launch;
mod records;

pub use args::{ArgValue, Scalar, Stats, TensorArg};
pub use header::{Distributed, Header, RecordOptions};
pub use launch::{Access, ArgDef, Captured, KernelDef, LaunchRecord, LayoutDef, SourceDef};
pub use records::{
    CallRecord, CompileRecord, CudaGraphRecord, CustomHashRecord, EndRecord, GapRecord, GraphDef,
    InputRecord, MarkerRecord, PauseRecord, ProcessGroupRecord, ProcessRecord, ReplayRecord,
    ResultsRecord, RowsRecord, SamplesRecord, SettingsRecord, StepRecord, ValuesRecord,
};

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The value of the header's `format` field.
pub const FORMAT_NAME: &str = "tritontui-trace";
/// Major version of the schema this crate reads and writes. A reader rejects
/// files with a larger major version.
pub const SCHEMA_MAJOR: u32 = 1;
/// Minor version: additions that old readers may ignore.
pub const SCHEMA_MINOR: u32 = 22;

/// One record of the stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "r", rename_all = "lowercase")]
pub enum Record {
    /// First record of every trace.
    Header(Header),
    /// Kernel source text, referenced by kernels.
    Source(SourceDef),
    /// Interned kernel description, referenced by launches.
    Kernel(KernelDef),
    /// Interned tensor layout, referenced by tensor arguments.
    Layout(LayoutDef),
    /// One kernel launch or aten op call.
    Launch(LaunchRecord),
    /// A launch captured into a CUDA graph (1.12): it runs at the graph's
    /// replays; its `captured` place is set.
    Captured(LaunchRecord),
    /// A process that took part in the recorded program.
    Process(ProcessRecord),
    /// A user marker (`tritontui.mark("label")`).
    Marker(MarkerRecord),
    /// A training step ended (1.22).
    Step(StepRecord),
    /// A process group this process became a member of (1.8).
    #[serde(rename = "process_group")]
    ProcessGroup(ProcessGroupRecord),
    /// A launch's tensors copied by value into a sidecar file (1.9;
    /// `capture` on disk). Not a launch captured into a CUDA graph, which
    /// is [`Record::Captured`].
    #[serde(rename = "capture")]
    Values(ValuesRecord),
    /// A launch's tensors hashed by the program's own hash function (1.10).
    #[serde(rename = "custom_hash")]
    CustomHash(CustomHashRecord),
    /// The samples of the launch just written (1.18).
    Samples(SamplesRecord),
    /// The row hashes of the launch just written (1.21).
    Rows(RowsRecord),
    /// A compilation or autotuning event.
    Compile(CompileRecord),
    /// A tensor that entered the recorded region from outside, such as a
    /// compiled graph's input (1.0; writers since 1.2 write calls).
    Input(InputRecord),
    /// Interned compiled graph, referenced by calls (1.2).
    Graph(GraphDef),
    /// One call of a compiled graph, with its inputs (1.2).
    Call(CallRecord),
    /// The tensors still alive when recording stopped: the program's
    /// results (1.3).
    Results(ResultsRecord),
    /// The tensors already alive when recording began, with their hashes
    /// then (1.16): a result that still holds those bytes, written by no
    /// recorded launch, is not a result of the recorded region.
    Held(ResultsRecord),
    /// A recorded process stopped at a pause point, or went on (1.1).
    Pause(PauseRecord),
    /// Something the recorder did not see, said where it happened (1.11).
    Gap(GapRecord),
    /// The numerics settings in force from a launch on, when they changed
    /// while recording (1.11).
    Settings(SettingsRecord),
    /// A CUDA graph's capture ended: its launches were written as captured
    /// (1.12).
    #[serde(rename = "cuda_graph")]
    CudaGraph(CudaGraphRecord),
    /// One replay of a captured CUDA graph, with its table of hashes (1.12).
    Replay(ReplayRecord),
    /// Written on clean exit; its absence means the trace ended early.
    End(EndRecord),
    /// A record kind this reader does not know; skipped.
    #[serde(skip)]
    Unknown(String),
}

impl Record {
    /// The kind string stored under `r`.
    pub fn kind(&self) -> &str {
        match self {
            Record::Header(_) => "header",
            Record::Source(_) => "source",
            Record::Kernel(_) => "kernel",
            Record::Layout(_) => "layout",
            Record::Launch(_) => "launch",
            Record::Captured(_) => "captured",
            Record::Process(_) => "process",
            Record::Marker(_) => "marker",
            Record::Step(_) => "step",
            Record::ProcessGroup(_) => "process_group",
            Record::Values(_) => "capture",
            Record::CustomHash(_) => "custom_hash",
            Record::Samples(_) => "samples",
            Record::Rows(_) => "rows",
            Record::Compile(_) => "compile",
            Record::Input(_) => "input",
            Record::Graph(_) => "graph",
            Record::Call(_) => "call",
            Record::Results(_) => "results",
            Record::Held(_) => "held",
            Record::Pause(_) => "pause",
            Record::Gap(_) => "gap",
            Record::Settings(_) => "settings",
            Record::CudaGraph(_) => "cuda_graph",
            Record::Replay(_) => "replay",
            Record::End(_) => "end",
            Record::Unknown(kind) => kind,
        }
    }
}

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(RecordVisitor)
    }
}

struct RecordVisitor;

impl<'de> Visitor<'de> for RecordVisitor {
    type Value = Record;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a record map whose first key is \"r\"")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Record, A::Error> {
        let key: Option<String> = map.next_key()?;
        if key.as_deref() != Some("r") {
            return Err(de::Error::custom(
                "record map does not start with the key \"r\"",
            ));
        }
        let kind: String = map.next_value()?;
        // The rest of the map is the record's body; derived visitors read it
        // as if it were a map of its own.
        let rest = de::value::MapAccessDeserializer::new(map);
        Ok(match kind.as_str() {
            "header" => Record::Header(Header::deserialize(rest)?),
            "source" => Record::Source(SourceDef::deserialize(rest)?),
            "kernel" => Record::Kernel(KernelDef::deserialize(rest)?),
            "layout" => Record::Layout(LayoutDef::deserialize(rest)?),
            "launch" => Record::Launch(LaunchRecord::deserialize(rest)?),
            "captured" => Record::Captured(LaunchRecord::deserialize(rest)?),
            "process" => Record::Process(ProcessRecord::deserialize(rest)?),
            "marker" => Record::Marker(MarkerRecord::deserialize(rest)?),
            "step" => Record::Step(StepRecord::deserialize(rest)?),
            "process_group" => Record::ProcessGroup(ProcessGroupRecord::deserialize(rest)?),
            "capture" => Record::Values(ValuesRecord::deserialize(rest)?),
            "custom_hash" => Record::CustomHash(CustomHashRecord::deserialize(rest)?),
            "samples" => Record::Samples(SamplesRecord::deserialize(rest)?),
            "rows" => Record::Rows(RowsRecord::deserialize(rest)?),
            "compile" => Record::Compile(CompileRecord::deserialize(rest)?),
            "input" => Record::Input(InputRecord::deserialize(rest)?),
            "graph" => Record::Graph(GraphDef::deserialize(rest)?),
            "call" => Record::Call(CallRecord::deserialize(rest)?),
            "results" => Record::Results(ResultsRecord::deserialize(rest)?),
            "held" => Record::Held(ResultsRecord::deserialize(rest)?),
            "pause" => Record::Pause(PauseRecord::deserialize(rest)?),
            "gap" => Record::Gap(GapRecord::deserialize(rest)?),
            "settings" => Record::Settings(SettingsRecord::deserialize(rest)?),
            "cuda_graph" => Record::CudaGraph(CudaGraphRecord::deserialize(rest)?),
            "replay" => Record::Replay(ReplayRecord::deserialize(rest)?),
            "end" => Record::End(EndRecord::deserialize(rest)?),
            _ => {
                IgnoredAny::deserialize(rest)?;
                Record::Unknown(kind)
            }
        })
    }
}

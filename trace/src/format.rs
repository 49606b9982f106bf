//! Record types of trace format v1, as they appear on disk.
//!
//! A trace is a stream of MessagePack maps; the first key of every map is
//! `r`, whose string value names the record kind. `docs/trace-format.md` is
//! the normative description; these types follow it field for field.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The value of the header's `format` field.
pub const FORMAT_NAME: &str = "tritontui-trace";
/// Major version of the schema this crate reads and writes. A reader rejects
/// files with a larger major version.
pub const SCHEMA_MAJOR: u32 = 1;
/// Minor version: additions that old readers may ignore.
pub const SCHEMA_MINOR: u32 = 16;

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
    /// A process group this process became a member of (1.8).
    #[serde(rename = "process_group")]
    ProcessGroup(ProcessGroupRecord),
    /// A launch's tensors captured by value into a sidecar file (1.9).
    Capture(CaptureRecord),
    /// A launch's tensors hashed by the program's own hash function (1.10).
    #[serde(rename = "custom_hash")]
    CustomHash(CustomHashRecord),
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
            Record::ProcessGroup(_) => "process_group",
            Record::Capture(_) => "capture",
            Record::CustomHash(_) => "custom_hash",
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
            "process_group" => Record::ProcessGroup(ProcessGroupRecord::deserialize(rest)?),
            "capture" => Record::Capture(CaptureRecord::deserialize(rest)?),
            "custom_hash" => Record::CustomHash(CustomHashRecord::deserialize(rest)?),
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

/// The first record: what was recorded, where and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always [`FORMAT_NAME`].
    pub format: String,
    /// `[major, minor]` schema version.
    pub version: (u32, u32),
    /// Name and version of the writer, e.g. `tritontui-recorder 0.1.0`.
    #[serde(default)]
    pub tool: String,
    /// Creation time, nanoseconds since the Unix epoch. Launch timestamps
    /// count from here.
    #[serde(default)]
    pub created_ns: u64,
    /// Host name of the recording machine.
    #[serde(default)]
    pub host: String,
    /// Process id of the recording process.
    #[serde(default)]
    pub pid: u32,
    /// Command line of the recording process.
    #[serde(default)]
    pub argv: Vec<String>,
    /// `torch.__version__`, if known.
    #[serde(default)]
    pub torch: Option<String>,
    /// `triton.__version__`, if known.
    #[serde(default)]
    pub triton: Option<String>,
    /// CUDA runtime version torch was built with, if any.
    #[serde(default)]
    pub cuda: Option<String>,
    /// Names of the devices in use, index = device ordinal.
    #[serde(default)]
    pub devices: Vec<String>,
    /// Recorder options in force.
    #[serde(default)]
    pub options: RecordOptions,
    /// This process's place in a multi-process run (torchrun's rank and
    /// world size), when it has one (1.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distributed: Option<Distributed>,
    /// What determines numerics besides code and inputs, as text by name
    /// (1.10): torch's numerics flags, config values that differ from
    /// their defaults, environment variables, the CUDA driver.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
}

/// A rank of a multi-process run, as its launcher (torchrun) named it in
/// the environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Distributed {
    /// Global rank (`RANK`).
    pub rank: u32,
    /// Number of ranks (`WORLD_SIZE`).
    pub world_size: u32,
    /// Rank on this node (`LOCAL_RANK`).
    #[serde(default)]
    pub local_rank: u32,
    /// Ranks on this node (`LOCAL_WORLD_SIZE`, 0 if unknown).
    #[serde(default)]
    pub local_world_size: u32,
    /// This node's index among the nodes (`GROUP_RANK`, 0 if unknown).
    #[serde(default)]
    pub node_rank: u32,
    /// The launcher's run id (`TORCHELASTIC_RUN_ID`), shared by the ranks
    /// of one run.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub run_id: String,
}

impl Header {
    /// A header for the current schema version with every optional field empty.
    pub fn new(tool: impl Into<String>) -> Self {
        Header {
            format: FORMAT_NAME.to_owned(),
            version: (SCHEMA_MAJOR, SCHEMA_MINOR),
            tool: tool.into(),
            created_ns: 0,
            host: String::new(),
            pid: 0,
            argv: Vec::new(),
            torch: None,
            triton: None,
            cuda: None,
            devices: Vec::new(),
            options: RecordOptions::default(),
            distributed: None,
            settings: BTreeMap::new(),
        }
    }
}

/// What the recorder was asked to capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordOptions {
    /// Name of the tensor hash algorithm, or `none`.
    #[serde(default = "default_hash")]
    pub hash: String,
    /// Whether arguments were hashed before each launch.
    #[serde(default)]
    pub hash_inputs: bool,
    /// Whether arguments were hashed after each launch.
    #[serde(default)]
    pub hash_outputs: bool,
    /// Whether summary statistics were computed.
    #[serde(default)]
    pub stats: bool,
    /// Whether aten ops were recorded besides Inductor kernels.
    #[serde(default)]
    pub aten: bool,
    /// Glob of kernel names recorded (`*` for all).
    #[serde(default = "default_glob")]
    pub kernels: String,
    /// Whether CUDA graphs were turned off so that launches could be seen.
    #[serde(default)]
    pub cuda_graphs_disabled: bool,
    /// Whether a launch inside a graph call may have taken its hashes
    /// before from the data flow (1.5, [`TensorArg::INHERITED`]).
    #[serde(default)]
    pub inherited_hashes: bool,
}

fn default_hash() -> String {
    "none".to_owned()
}

fn default_glob() -> String {
    "*".to_owned()
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            hash: default_hash(),
            hash_inputs: false,
            hash_outputs: false,
            stats: false,
            aten: false,
            kernels: default_glob(),
            cuda_graphs_disabled: false,
            inherited_hashes: false,
        }
    }
}

/// Source text of one or more kernels, stored whole so the trace is
/// self-contained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceDef {
    /// Identifier referenced by [`KernelDef::source`].
    pub id: u64,
    /// Path the source was read from when recorded.
    #[serde(default)]
    pub path: String,
    /// Language for highlighting: `python`, `cpp`, `cuda`, or empty.
    #[serde(default)]
    pub lang: String,
    /// The full text.
    pub text: String,
}

/// An interned kernel: everything about it that does not change per launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelDef {
    /// Identifier referenced by [`LaunchRecord::kernel`].
    pub id: u64,
    /// Kernel name, e.g. `triton_poi_fused_add_0` or `aten::mm`.
    pub name: String,
    /// `triton`, `cpp`, `aten`, `user-triton` or `extern` (a C shim
    /// called by a C++ wrapper).
    pub backend: String,
    /// Declared parameters, in launch-argument order.
    #[serde(default)]
    pub args: Vec<ArgDef>,
    /// Source id, if the source is in the trace.
    #[serde(default)]
    pub source: Option<u64>,
    /// Compiler metadata worth keeping (`atomic_add_found`, deterministic
    /// flags, ...).
    #[serde(default)]
    pub meta: BTreeMap<String, Scalar>,
    /// Launch configuration: `num_warps`, `num_stages`, block sizes.
    #[serde(default)]
    pub config: BTreeMap<String, Scalar>,
}

/// A declared kernel parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArgDef {
    /// Parameter name, e.g. `in_ptr0`.
    pub name: String,
    /// Declared type as the compiler wrote it (`*fp32`, `i32`, `const float*`).
    #[serde(default, rename = "type")]
    pub ty: String,
    /// How the kernel uses the argument.
    #[serde(default)]
    pub access: Access,
}

/// How a kernel uses an argument, as declared by the compiler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Read only (`in_ptr*`, `const T*`, scalars).
    #[default]
    In,
    /// Written without being read first (`out_ptr*`): its bytes before the
    /// launch do not matter.
    Out,
    /// Read and written (`in_out_ptr*`, mutated arguments).
    Inout,
}

impl Access {
    /// Its name in the trace and in reports: `in`, `out`, `inout`.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::In => "in",
            Access::Out => "out",
            Access::Inout => "inout",
        }
    }

    /// The kernel reads the argument's value before the launch.
    pub fn reads(self) -> bool {
        self != Access::Out
    }

    /// The kernel is declared to write the argument.
    pub fn writes(self) -> bool {
        self != Access::In
    }
}

/// An interned tensor layout: dtype, shape and strides of a view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayoutDef {
    /// Identifier referenced by tensor arguments.
    pub id: u64,
    /// torch dtype name without the `torch.` prefix, e.g. `float32`.
    pub dtype: String,
    /// Size of one element in bytes.
    pub itemsize: u32,
    /// Sizes, outermost first.
    pub shape: Vec<u64>,
    /// Strides in elements.
    pub stride: Vec<i64>,
    /// Storage offset in elements.
    #[serde(default)]
    pub offset: u64,
    /// Number of bytes from the first element's address to one past the
    /// last element's last byte.
    pub span: u64,
}

impl LayoutDef {
    /// The byte span of a view with these sizes and non-negative strides:
    /// `(sum((shape[i] - 1) * stride[i]) + 1) * itemsize`, or 0 when empty.
    pub fn span_of(shape: &[u64], stride: &[i64], itemsize: u32) -> u64 {
        if shape.contains(&0) {
            return 0;
        }
        let last: u64 = shape
            .iter()
            .zip(stride)
            .map(|(&n, &s)| (n - 1).saturating_mul(s.unsigned_abs()))
            .fold(0u64, u64::saturating_add);
        last.saturating_add(1).saturating_mul(u64::from(itemsize))
    }

    /// Whether a view with these sizes and strides (in elements) lies
    /// back to back in row-major order, reading its bytes once each in
    /// memory order (sizes of 1 may have any stride).
    pub fn is_row_major(shape: &[u64], stride: &[i64]) -> bool {
        let mut dense = 1i64;
        for (&size, &stride) in shape.iter().zip(stride).rev() {
            if size != 1 && stride != dense {
                return false;
            }
            dense = dense.saturating_mul(size as i64);
        }
        true
    }
}

/// One launch (or aten op call), in execution order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchRecord {
    /// Sequence number, increasing through the trace.
    #[serde(rename = "i")]
    pub seq: u64,
    /// Kernel id.
    #[serde(rename = "k")]
    pub kernel: u64,
    /// Grid, one to three dimensions; empty for aten ops.
    #[serde(rename = "g", default)]
    pub grid: Vec<u64>,
    /// Raw stream handle (0 for the default stream and for CPU).
    #[serde(rename = "s", default)]
    pub stream: u64,
    /// Device ordinal; -1 for CPU.
    #[serde(rename = "d", default)]
    pub device: i32,
    /// OS thread id of the launching thread.
    #[serde(rename = "th", default)]
    pub thread: u64,
    /// Nanoseconds since the header's `created_ns`.
    #[serde(rename = "ts", default)]
    pub ts: u64,
    /// Made while autotuning, not by the program itself.
    #[serde(rename = "at", default, skip_serializing_if = "is_false")]
    pub autotune: bool,
    /// Arguments in the kernel's declared order.
    #[serde(rename = "a", default)]
    pub args: Vec<ArgValue>,
    /// (1.12) In a `captured` record, the CUDA graph the launch was
    /// captured into: it did not run when it was written but runs at each
    /// of the graph's replays, and its tensor arguments' `pre` and `post`
    /// are slots of the graph's table, not hashes (a `replay` record holds
    /// the hashes).
    #[serde(rename = "cg", default, skip_serializing_if = "Option::is_none")]
    pub captured: Option<Captured>,
}

/// Where a captured launch sits in its CUDA graph (1.12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Captured {
    /// The graph's id, as its `cuda_graph` and `replay` records name it.
    #[serde(rename = "g")]
    pub graph: u64,
    /// The launch's place among the graph's launches, from 0.
    #[serde(rename = "i")]
    pub index: u32,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A launch argument: a tensor or a scalar value.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    /// A tensor (or raw pointer with a known layout).
    Tensor(TensorArg),
    /// Any non-tensor value.
    Scalar(Scalar),
}

impl ArgValue {
    /// A tensor argument without summary statistics.
    pub fn tensor(layout: u64, ptr: u64, flags: u64, pre: Option<u64>, post: Option<u64>) -> Self {
        ArgValue::Tensor(TensorArg {
            layout,
            ptr,
            flags,
            pre,
            post,
            stats: None,
        })
    }
}

/// A tensor argument of one launch.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorArg {
    /// Layout id.
    pub layout: u64,
    /// Address of the first element.
    pub ptr: u64,
    /// Bit set of `TensorArg::WRITTEN`.
    pub flags: u64,
    /// Hash of the logical bytes before the launch, if hashed.
    pub pre: Option<u64>,
    /// Hash of the logical bytes after the launch, if hashed.
    pub post: Option<u64>,
    /// Summary statistics of the value after the launch, if computed.
    pub stats: Option<Stats>,
}

impl TensorArg {
    /// Flag bit: the launch wrote this argument (declared as written, or
    /// its hash changed).
    pub const WRITTEN: u64 = 1;
    /// Flag bit (1.4): the launch handed out this argument's memory and
    /// left its bytes as they were (an allocation, or an output an
    /// operation returns unwritten), so it is not hashed.
    pub const ALLOCATED: u64 = 2;
    /// Flag bit (1.5): the bytes before the launch were not hashed; they
    /// are those the same view held when last hashed in this graph call
    /// (see `known_views`), and a reader takes `pre` from there.
    pub const INHERITED: u64 = 4;

    /// Whether the written flag is set.
    pub fn written(&self) -> bool {
        self.flags & Self::WRITTEN != 0
    }

    /// Whether the allocated flag is set.
    pub fn allocated(&self) -> bool {
        self.flags & Self::ALLOCATED != 0
    }

    /// Whether the inherited flag is set.
    pub fn inherited(&self) -> bool {
        self.flags & Self::INHERITED != 0
    }
}

/// Summary statistics of a floating-point tensor.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Smallest finite value.
    pub min: f64,
    /// Largest finite value.
    pub max: f64,
    /// Mean of the absolute finite values.
    pub mean_abs: f64,
    /// Number of NaN elements.
    pub nan: u64,
    /// Number of infinite elements.
    pub inf: u64,
}

impl Serialize for ArgValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ArgValue::Scalar(v) => v.serialize(s),
            ArgValue::Tensor(t) => {
                let len = if t.stats.is_some() { 6 } else { 5 };
                let mut seq = s.serialize_seq(Some(len))?;
                seq.serialize_element(&t.layout)?;
                seq.serialize_element(&t.ptr)?;
                seq.serialize_element(&t.flags)?;
                seq.serialize_element(&t.pre)?;
                seq.serialize_element(&t.post)?;
                if let Some(stats) = &t.stats {
                    let tuple = (stats.min, stats.max, stats.mean_abs, stats.nan, stats.inf);
                    seq.serialize_element(&tuple)?;
                }
                seq.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for ArgValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ArgVisitor)
    }
}

struct ArgVisitor;

impl<'de> Visitor<'de> for ArgVisitor {
    type Value = ArgValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tensor array or a scalar")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ArgValue, A::Error> {
        let missing = |i| de::Error::invalid_length(i, &"a tensor array of 5 or 6 items");
        let layout = seq.next_element()?.ok_or_else(|| missing(0))?;
        let ptr = seq.next_element()?.ok_or_else(|| missing(1))?;
        let flags = seq.next_element()?.ok_or_else(|| missing(2))?;
        let pre = seq.next_element()?.ok_or_else(|| missing(3))?;
        let post = seq.next_element()?.ok_or_else(|| missing(4))?;
        let stats = seq.next_element::<(f64, f64, f64, u64, u64)>()?.map(
            |(min, max, mean_abs, nan, inf)| Stats {
                min,
                max,
                mean_abs,
                nan,
                inf,
            },
        );
        // Items a later minor version may append.
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(ArgValue::Tensor(TensorArg {
            layout,
            ptr,
            flags,
            pre,
            post,
            stats,
        }))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<ArgValue, E> {
        Ok(ArgValue::Scalar(Scalar::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ArgValue, E> {
        Ok(ArgValue::Scalar(Scalar::Int(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<ArgValue, E> {
        Ok(ArgValue::Scalar(Scalar::from_u64(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<ArgValue, E> {
        Ok(ArgValue::Scalar(Scalar::Float(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<ArgValue, E> {
        Ok(ArgValue::Scalar(Scalar::Str(v.to_owned())))
    }

    fn visit_unit<E: de::Error>(self) -> Result<ArgValue, E> {
        Ok(ArgValue::Scalar(Scalar::None))
    }

    fn visit_none<E: de::Error>(self) -> Result<ArgValue, E> {
        Ok(ArgValue::Scalar(Scalar::None))
    }
}

/// A non-tensor value: a scalar argument, a config entry or a metadata entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// `None` / nil.
    None,
    /// A boolean.
    Bool(bool),
    /// An integer that fits in i64.
    Int(i64),
    /// An unsigned integer above `i64::MAX`.
    UInt(u64),
    /// A float; compared bit for bit.
    Float(f64),
    /// A string.
    Str(String),
}

impl Scalar {
    fn from_u64(v: u64) -> Scalar {
        i64::try_from(v).map_or(Scalar::UInt(v), Scalar::Int)
    }

    /// Equality that tells `0.0` from `-0.0` and treats equal NaN bits as equal,
    /// which is what "same bits" means for a recorded value.
    pub fn same_bits(&self, other: &Scalar) -> bool {
        match (self, other) {
            (Scalar::Float(a), Scalar::Float(b)) => a.to_bits() == b.to_bits(),
            _ => self == other,
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Scalar::None => f.write_str("None"),
            Scalar::Bool(v) => write!(f, "{}", if *v { "True" } else { "False" }),
            Scalar::Int(v) => write!(f, "{v}"),
            Scalar::UInt(v) => write!(f, "{v}"),
            Scalar::Float(v) => write!(f, "{v:?}"),
            Scalar::Str(v) => write!(f, "{v:?}"),
        }
    }
}

impl Serialize for Scalar {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Scalar::None => s.serialize_unit(),
            Scalar::Bool(v) => s.serialize_bool(*v),
            Scalar::Int(v) => s.serialize_i64(*v),
            Scalar::UInt(v) => s.serialize_u64(*v),
            Scalar::Float(v) => s.serialize_f64(*v),
            Scalar::Str(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match d.deserialize_any(ArgVisitor)? {
            ArgValue::Scalar(s) => Ok(s),
            ArgValue::Tensor(_) => Err(de::Error::custom("expected a scalar, found an array")),
        }
    }
}

/// A process that took part in the recorded program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessRecord {
    /// Process id.
    pub pid: u32,
    /// Parent process id, 0 if unknown.
    #[serde(default)]
    pub ppid: u32,
    /// `main`, `compile-worker`, `rank`, ...
    #[serde(default)]
    pub role: String,
    /// Host name.
    #[serde(default)]
    pub host: String,
    /// Command line.
    #[serde(default)]
    pub cmdline: Vec<String>,
    /// Start time, nanoseconds since the Unix epoch (0 if unknown).
    #[serde(default)]
    pub start_ns: u64,
    /// The kernel's boot id on its host (`/proc/sys/kernel/random/boot_id`),
    /// which tells machines with one host name apart, and reboots (1.1).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub boot_id: String,
}

/// A process stopping at a pause point (`state` `paused`) and going on
/// again (`resumed`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PauseRecord {
    /// `paused` or `resumed`.
    pub state: String,
    /// The process.
    pub pid: u32,
    /// Host name.
    #[serde(default)]
    pub host: String,
    /// Sequence number of the launch it stopped before (none for a pause
    /// at a kernel's compile).
    #[serde(default)]
    pub launch: Option<u64>,
    /// The kernel about to be launched or compiled.
    #[serde(default)]
    pub kernel: String,
    /// The file whose removal resumes the process (while it exists, the
    /// process is paused).
    #[serde(default)]
    pub resume_file: String,
    /// What resumed it: `debugger`, `tritontui resume`, `signal`.
    #[serde(default)]
    pub by: String,
    /// Nanoseconds since the header's `created_ns`.
    #[serde(default)]
    pub ts: u64,
}

/// A process group this process became a member of: the default group
/// (`init_process_group`), `new_group`, `split_group`, a device mesh's
/// groups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessGroupRecord {
    /// Its name, as collectives name it (`"0"` is the default group).
    pub name: String,
    /// What torch calls it (`default_pg`, a mesh dimension), if anything.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub desc: String,
    /// Its backend (`gloo`, `nccl`, ...).
    #[serde(default)]
    pub backend: String,
    /// Its members' global ranks, in the order of their ranks in it.
    pub ranks: Vec<u32>,
    /// Nanoseconds since the header's `created_ns`.
    #[serde(default)]
    pub ts: u64,
}

/// A launch whose tensor arguments were copied by value, before and after
/// it, into a sidecar file (`record(capture=...)`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureRecord {
    /// The launch's `seq`.
    pub seq: u64,
    /// The sidecar file, relative to the trace's folder: a safetensors file
    /// holding `ARG.pre` and `ARG.post` for each captured argument.
    pub file: String,
    /// Bytes of tensor data in the file.
    #[serde(default)]
    pub bytes: u64,
    /// Nanoseconds since the header's `created_ns`.
    #[serde(default)]
    pub ts: u64,
}

/// What a hash function of the program's own (`record(hash_fn=...)`) gave
/// for a launch's tensors, in addition to the trace's hashes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomHashRecord {
    /// The launch's `seq`.
    pub seq: u64,
    /// The function's name.
    #[serde(rename = "fn")]
    pub function: String,
    /// `[argument index, value before, value after]` per tensor argument
    /// (nil where not computed), numbered as in the launch record.
    pub args: Vec<(u32, Scalar, Scalar)>,
    /// Nanoseconds since the header's `created_ns`.
    #[serde(default)]
    pub ts: u64,
}

/// A user marker placed between launches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MarkerRecord {
    /// The label given to `tritontui.mark`.
    pub label: String,
    /// Sequence number of the last launch before the marker, if any.
    #[serde(default)]
    pub after: Option<u64>,
    /// Nanoseconds since the header's `created_ns`.
    #[serde(default)]
    pub ts: u64,
    /// OS thread id.
    #[serde(default, rename = "th")]
    pub thread: u64,
}

/// A compilation or autotuning event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompileRecord {
    /// What happened: `compile`, `autotune`, `graph`, ...
    pub event: String,
    /// Kernel or graph name.
    pub name: String,
    /// Process that did the work.
    #[serde(default)]
    pub pid: u32,
    /// Nanoseconds since the header's `created_ns`.
    #[serde(default)]
    pub ts: u64,
    /// Duration in nanoseconds, 0 if unknown.
    #[serde(default)]
    pub dur_ns: u64,
    /// Event-specific details (e.g. the chosen config).
    #[serde(default)]
    pub info: BTreeMap<String, Scalar>,
}

/// A tensor that entered the recorded region from outside: a compiled
/// graph's input (parameter, buffer or user input).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRecord {
    /// Name in the graph, e.g. `primals_1` or `arg0_1`.
    pub name: String,
    /// The compiled graph it is an input of, if known.
    #[serde(default)]
    pub graph: String,
    /// Sequence number of the first launch recorded after it.
    #[serde(default)]
    pub before: u64,
    /// Device ordinal, -1 for CPU.
    #[serde(rename = "d", default)]
    pub device: i32,
    /// The tensor, encoded like a launch's tensor argument.
    #[serde(rename = "t")]
    pub tensor: ArgValue,
}

/// A compiled graph whose calls are recorded (1.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphDef {
    /// Unique among graphs in the file.
    pub id: u64,
    /// The graph's cache key, if known.
    #[serde(default)]
    pub key: String,
    /// Its input names by position, e.g. `primals_1` or `arg0_1`.
    #[serde(default)]
    pub inputs: Vec<String>,
}

/// One call of a compiled graph: the values it was called with, from
/// position `first` on (1.2). Its tensors entered the recorded region from
/// outside (parameters, buffers, user inputs, saved activations).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// The graph's id.
    #[serde(rename = "g")]
    pub graph: u64,
    /// Sequence number of the first launch recorded after it.
    #[serde(default)]
    pub before: u64,
    /// Device ordinal of its first CUDA tensor, -1 for none.
    #[serde(rename = "d", default)]
    pub device: i32,
    /// Input position of the first element of `args`.
    #[serde(default)]
    pub first: u64,
    /// The inputs, encoded like a launch's arguments.
    #[serde(rename = "a", default)]
    pub args: Vec<ArgValue>,
}

/// The tensors of one device still alive when recording stopped (1.3):
/// parameters, gradients, optimizer state, outputs the program holds. What
/// recorded launches last wrote into them is the program's result. The
/// same fields list the tensors alive when recording began (`held`, 1.16).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultsRecord {
    /// Sequence number the next launch would have had.
    #[serde(default)]
    pub before: u64,
    /// Device ordinal of every tensor in `args`, -1 for CPU.
    #[serde(rename = "d", default)]
    pub device: i32,
    /// The tensors, encoded like a launch's arguments; each hash *before*
    /// is its final value (in a `held` record, its value when recording
    /// began).
    #[serde(rename = "a", default)]
    pub args: Vec<ArgValue>,
    /// What the program calls each tensor of `args`, in order (1.16): a
    /// parameter's or buffer's path in its module (`layers.0.weight`), its
    /// gradient (`layers.0.weight.grad`), an optimizer's state
    /// (`layers.0.weight.exp_avg`); empty where nothing names it. Absent
    /// when no tensor has a name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
}

/// Something the recorder did not see (1.11): a comparison of a trace
/// with a gap can find a divergence, never show that the runs agree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapRecord {
    /// What was not seen: `results` (the program's results were not
    /// recorded), `launch` (a launch that could not be described), ...
    pub what: String,
    /// Why, in words.
    #[serde(default)]
    pub detail: String,
    /// Sequence number the next launch would have had.
    #[serde(default)]
    pub before: u64,
    /// Nanoseconds since the header's `created_ns`.
    #[serde(default)]
    pub ts: u64,
}

/// A CUDA graph whose capture ended (1.12): its launches are the
/// `launch` records captured into it, in their order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CudaGraphRecord {
    /// The graph's id (from 1 in a trace).
    pub graph: u64,
    /// Launches captured into it.
    #[serde(default)]
    pub launches: u32,
    /// Slots of its table: the hashes each replay delivers.
    #[serde(default)]
    pub slots: u32,
    /// Device ordinal of the capture.
    #[serde(default)]
    pub device: i32,
    /// Raw handle of the capturing stream.
    #[serde(default)]
    pub stream: u64,
    /// Why some of its launches' hashes are missing from every replay
    /// (empty when none are).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub missing: String,
    /// The memory pool its capture allocated from (1.13): torch's id of
    /// it (`CUDAGraph.pool()`). Graphs with the same pool share memory: a
    /// replay of one may write where another's outputs live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<[u64; 2]>,
    /// Bytes its hash kernels read at each replay (1.13).
    #[serde(default)]
    pub bytes: u64,
    /// Hash kernels its capture put into it, each run at every replay
    /// (1.14).
    #[serde(default)]
    pub hash_kernels: u32,
    /// Nanoseconds since the header's `created_ns`.
    #[serde(default)]
    pub ts: u64,
}

/// One replay of a captured CUDA graph (1.12): its launches ran again, in
/// their captured order, as launches `first`, `first + 1`, ...
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayRecord {
    /// The graph's id.
    pub graph: u64,
    /// Which replay of the graph, from 0.
    #[serde(default)]
    pub n: u64,
    /// Sequence number of the replay's first launch.
    #[serde(default)]
    pub first: u64,
    /// Raw handle of the stream the graph was replayed on.
    #[serde(default)]
    pub stream: u64,
    /// OS thread id of the replaying thread.
    #[serde(default)]
    pub thread: u64,
    /// The graph's table after the replay, by slot; empty when its hashes
    /// could not be read back (the replay's launches are then unhashed).
    #[serde(default)]
    pub hashes: Vec<u64>,
    /// Nanoseconds since the header's `created_ns`.
    #[serde(default)]
    pub ts: u64,
}

/// The numerics settings a program switched while recording (1.11): each
/// sampled setting by its header name, in force from launch `before` on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingsRecord {
    /// Sequence number of the first launch they are in force for.
    #[serde(default)]
    pub before: u64,
    /// Every sampled setting by name, as text.
    #[serde(default)]
    pub values: BTreeMap<String, String>,
    /// Nanoseconds since the header's `created_ns`.
    #[serde(default)]
    pub ts: u64,
}

/// The last record of a trace whose recorder stopped cleanly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndRecord {
    /// Nanoseconds since the header's `created_ns`.
    #[serde(default)]
    pub ts: u64,
    /// Number of launch records written.
    #[serde(default)]
    pub launches: u64,
    /// Why recording stopped: `exit`, `stopped`, or an internal error.
    #[serde(default)]
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::LayoutDef;

    #[test]
    fn only_dense_row_major_views_read_their_bytes_in_memory_order() {
        let row_major = LayoutDef::is_row_major;
        // The same 4096 x 1024 buffer as [8, 512, 1024] and as [4096, 1024].
        assert!(row_major(&[8, 512, 1024], &[524288, 1024, 1]));
        assert!(row_major(&[4096, 1024], &[1024, 1]));
        // Size-1 dimensions read nothing, whatever their stride.
        assert!(row_major(&[1, 4096, 1, 1024], &[7, 1024, 3, 1]));
        assert!(row_major(&[], &[]));
        // Transposed, sliced or strided: another order, or gaps.
        assert!(!row_major(&[1024, 4096], &[1, 1024]));
        assert!(!row_major(&[4096, 512], &[1024, 1]));
        assert!(!row_major(&[2048], &[2]));
    }
}

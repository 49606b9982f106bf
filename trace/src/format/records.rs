//! The records around launches: processes, pauses, process groups,
//! captures, markers, compile events, graph calls, results, gaps,
//! settings, CUDA graphs and the end.

use super::{ArgValue, Scalar};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
pub struct ValuesRecord {
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

/// The samples of a launch's written floating tensors (1.18, `samples`),
/// written right after its launch record: each tensor's elements at the
/// positions `crate::samples` names for its element count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplesRecord {
    /// The launch's `seq`.
    pub seq: u64,
    /// `[argument index, [values]]` per sampled tensor argument, numbered
    /// as in the launch record.
    #[serde(rename = "a")]
    pub args: Vec<(u32, Vec<f64>)>,
}

impl SamplesRecord {
    /// The samples record of `launch`, if any of its tensors has samples.
    pub fn of(launch: &crate::format::LaunchRecord) -> Option<SamplesRecord> {
        let args: Vec<(u32, Vec<f64>)> = launch
            .args
            .iter()
            .enumerate()
            .filter_map(|(i, arg)| match arg {
                crate::format::ArgValue::Tensor(t) => Some((i as u32, t.samples.clone()?)),
                crate::format::ArgValue::Scalar(_) => None,
            })
            .collect();
        (!args.is_empty()).then_some(SamplesRecord {
            seq: launch.seq,
            args,
        })
    }
}

/// The row hashes of a launch's tensors (1.21, `rows`), written right
/// after its launch record (and its samples' record): each tensor's
/// hashes of the rows of its leading dimension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowsRecord {
    /// The launch's `seq`.
    pub seq: u64,
    /// `[argument index, [row hashes]]` per tensor argument with row
    /// hashes, numbered as in the launch record.
    #[serde(rename = "a")]
    pub args: Vec<(u32, Vec<u64>)>,
}

impl RowsRecord {
    /// The rows record of `launch`, if any of its tensors has row hashes.
    pub fn of(launch: &crate::format::LaunchRecord) -> Option<RowsRecord> {
        let args: Vec<(u32, Vec<u64>)> = launch
            .args
            .iter()
            .enumerate()
            .filter_map(|(i, arg)| match arg {
                crate::format::ArgValue::Tensor(t) => Some((i as u32, t.rows.clone()?)),
                crate::format::ArgValue::Scalar(_) => None,
            })
            .collect();
        (!args.is_empty()).then_some(RowsRecord {
            seq: launch.seq,
            args,
        })
    }
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

/// A training step ended (1.22): an optimizer's `step()` returned, or the
/// program called `tritontui.step()`. The launches after it are the next
/// step's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// The step that ended, counted from 0 at the recording's start.
    pub step: u64,
    /// Sequence number of the last launch before it, if any.
    #[serde(default)]
    pub after: Option<u64>,
    /// What ended it: `optimizer` (its `step()`) or `user`
    /// (`tritontui.step()`).
    #[serde(default)]
    pub by: String,
    /// Nanoseconds since the header's `created_ns`.
    #[serde(default)]
    pub ts: u64,
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

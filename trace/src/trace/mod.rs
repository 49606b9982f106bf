//! A whole trace loaded into compact, index-addressed tables: the types
//! the engine and the app read (mod.rs) and the loader that builds them
//! from the records (`load`).

mod load;
mod sites;
mod steps;

pub use steps::Steps;

use crate::format::{
    Access, ArgDef, CompileRecord, CudaGraphRecord, CustomHashRecord, EndRecord, GapRecord, Header,
    LayoutDef, MarkerRecord, PauseRecord, ProcessGroupRecord, ProcessRecord, Scalar,
    SettingsRecord, Stats, ValuesRecord,
};
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// A source text; kernels refer to it by index.
#[derive(Debug, Clone)]
pub struct Source {
    /// Path the source was recorded from.
    pub path: String,
    /// Language for highlighting.
    pub lang: String,
    /// Full text.
    pub text: String,
}

/// A kernel, with file ids resolved to table indices.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// Kernel name.
    pub name: String,
    /// `triton`, `cpp`, `aten` or `user-triton`.
    pub backend: String,
    /// Declared parameters.
    pub args: Vec<ArgDef>,
    /// Index into [`Trace::sources`].
    pub source: Option<u32>,
    /// Compiler metadata.
    pub meta: BTreeMap<String, Scalar>,
    /// Launch configuration.
    pub config: BTreeMap<String, Scalar>,
}

/// Index of an argument within its launch.
pub type ArgIndex = u16;

impl Kernel {
    /// Name of parameter `i`, or `arg{i}` when the kernel does not declare it.
    pub fn arg_name(&self, i: usize) -> String {
        self.args
            .get(i)
            .map_or_else(|| format!("arg{i}"), |a| a.name.clone())
    }

    /// The declared access of argument `i`; undeclared arguments count as
    /// read.
    pub fn access_of(&self, i: usize) -> Access {
        self.args.get(i).map_or(Access::In, |a| a.access)
    }

    /// Whether argument `i` of a launch of this kernel, `arg`, was written
    /// by it: flagged by the recorder or declared by the kernel, or its
    /// hash changed.
    pub fn wrote(&self, i: usize, arg: &ArgRef<'_>) -> bool {
        match arg {
            ArgRef::Scalar(_) => false,
            ArgRef::Tensor(t) => {
                t.written
                    || self.access_of(i).writes()
                    || matches!((t.pre, t.post), (Some(x), Some(y)) if x != y)
            }
        }
    }

    /// Whether the kernel allocates its result (`meta.allocates`: an
    /// `empty` op, a wrapper's buffer allocation): whatever its result's
    /// bytes held before is nobody's output.
    pub fn is_allocation(&self) -> bool {
        self.meta.get("allocates") == Some(&Scalar::Bool(true))
    }

    /// Whether the kernel is a collective of torch.distributed (`c10d::*`,
    /// or a functional collective of a compiled graph,
    /// `_c10d_functional::*`): what it writes depends on the other ranks.
    pub fn is_collective(&self) -> bool {
        self.name.starts_with("c10d::") || self.name.starts_with("_c10d_functional::")
    }

    /// Whether the kernel hands what it reads to the host
    /// (`meta.host_read`: `.item()`, `.tolist()`, an op returning a number
    /// or a bool): what it reads is part of the program's results.
    pub fn is_host_read(&self) -> bool {
        self.meta.get("host_read") == Some(&Scalar::Bool(true))
    }
}

/// One launch, with its arguments stored in [`Trace::args`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    /// Sequence number from the file.
    pub seq: u64,
    /// Index into [`Trace::kernels`].
    pub kernel: u32,
    /// Grid, padded with 1s to three dimensions.
    pub grid: [u64; 3],
    /// Number of grid dimensions given in the file (0 for aten ops).
    pub grid_dims: u8,
    /// Made while autotuning.
    pub autotune: bool,
    /// Device ordinal, -1 for CPU.
    pub device: i32,
    /// Raw stream handle.
    pub stream: u64,
    /// OS thread id.
    pub thread: u64,
    /// Nanoseconds since the header's creation time.
    pub ts: u64,
    /// Index into [`Trace::replays`] when the launch ran in a CUDA graph's
    /// replay (1.12).
    pub replay: Option<u32>,
    /// The `nn.Module` path it ran in (index into the module paths), when
    /// recorded (1.18; [`Trace::module_of`]).
    module: Option<u32>,
    args_start: u32,
    args_len: u32,
}

impl Launch {
    /// The grid as written: `grid_dims` entries.
    pub fn grid(&self) -> &[u64] {
        &self.grid[..usize::from(self.grid_dims)]
    }
}

/// One argument of one launch, packed into 32 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arg {
    ptr: u64,
    pre: u64,
    post: u64,
    /// Layout index for tensors, scalar index for scalars.
    slot: u32,
    flags: u8,
}

const WRITTEN: u8 = 1;
const HAS_PRE: u8 = 2;
const HAS_POST: u8 = 4;
const SCALAR: u8 = 8;
const HAS_STATS: u8 = 16;
const ALLOCATED: u8 = 32;
const INHERITED: u8 = 64;
const HAS_SAMPLES: u8 = 128;

/// A borrowed, decoded view of an [`Arg`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArgRef<'t> {
    /// A tensor argument.
    Tensor(TensorRef<'t>),
    /// A scalar argument.
    Scalar(&'t Scalar),
}

/// A tensor argument of one launch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TensorRef<'t> {
    /// Dtype, shape and strides.
    pub layout: &'t LayoutDef,
    /// Index of the layout in [`Trace::layouts`].
    pub layout_index: u32,
    /// Address of the first element.
    pub ptr: u64,
    /// Hash before the launch, if hashed.
    pub pre: Option<u64>,
    /// Hash after the launch, if hashed.
    pub post: Option<u64>,
    /// The launch wrote this argument.
    pub written: bool,
    /// The launch handed out this memory without writing it: its bytes
    /// after the launch are whatever the memory held.
    pub allocated: bool,
    /// `pre` was not hashed before the launch but taken from the data
    /// flow: the same view's hash after the launch that last touched it
    /// in this graph call, or on the call's entry (`known_views`).
    pub inherited: bool,
    /// Summary statistics, if computed.
    pub stats: Option<Stats>,
    /// Samples of its value after the launch (1.18, `crate::samples`), if
    /// taken.
    pub samples: Option<&'t [f64]>,
    /// Hashes of its rows after the launch (1.21, `rows`), one per index
    /// of its leading dimension, if taken.
    pub rows: Option<&'t [u64]>,
}

impl TensorRef<'_> {
    /// The byte range `[start, end)` this view covers.
    pub fn byte_range(&self) -> (u64, u64) {
        (self.ptr, self.ptr.saturating_add(self.layout.extent))
    }

    /// The bytes this view covers on `device` (its launch's).
    pub fn span(&self, device: i32) -> crate::Span {
        let (start, end) = self.byte_range();
        crate::Span::new(device, start, end)
    }
}

/// A tensor that entered the recorded region from outside (a graph input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphInput {
    /// Name in the graph, e.g. `primals_1`.
    pub name: Arc<str>,
    /// The compiled graph, if known.
    pub graph: Arc<str>,
    /// Sequence number of the first launch recorded after it.
    pub before: u64,
    /// Device ordinal, -1 for CPU.
    pub device: i32,
    /// Index into [`Trace::layouts`].
    pub layout: u32,
    /// Address of the first element.
    pub ptr: u64,
    /// Hash of its bytes when it entered, if hashed.
    pub hash: Option<u64>,
}

/// One call of a compiled graph: which graph, and where its launches
/// begin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphCall {
    /// The compiled graph's key (as [`GraphInput::graph`]).
    pub graph: Arc<str>,
    /// Sequence number of the first launch recorded after it.
    pub before: u64,
}

/// A tensor alive when recording stopped: part of the program's results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveTensor {
    /// Device ordinal, -1 for CPU.
    pub device: i32,
    /// Index into [`Trace::layouts`].
    pub layout: u32,
    /// Address of the first element.
    pub ptr: u64,
    /// Hash of its bytes at the end, if hashed.
    pub hash: Option<u64>,
    /// What the program calls it (a parameter's path, its gradient, an
    /// optimizer's state), when something names it (1.16).
    pub name: Option<Arc<str>>,
    /// Hash of its bytes when recording began, when the same view of the
    /// same bytes was alive then (a `held` record lists it) and hashed.
    pub held_hash: Option<u64>,
}

impl LiveTensor {
    /// Whether it holds the bytes it held when recording began: then,
    /// unless a recorded launch wrote them, it is no result of the
    /// recorded region.
    pub fn unchanged_since_start(&self) -> bool {
        self.hash.is_some() && self.hash == self.held_hash
    }
}

/// How a trace ended, when it did not end with an end record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EarlyEnd {
    /// The last record is cut short at this byte offset.
    TruncatedAt(u64),
    /// Every record is whole but the end record is missing.
    NoEndRecord,
}

impl std::fmt::Display for EarlyEnd {
    /// `truncated at byte N` or `no end record`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EarlyEnd::TruncatedAt(offset) => write!(f, "truncated at byte {offset}"),
            EarlyEnd::NoEndRecord => f.write_str("no end record"),
        }
    }
}

/// A loaded trace.
#[derive(Debug)]
pub struct Trace {
    /// File the trace was read from.
    pub path: PathBuf,
    /// Size of the file in bytes.
    pub bytes: u64,
    /// The header record.
    pub header: Header,
    /// Source texts.
    pub sources: Vec<Source>,
    /// Kernels, by index.
    pub kernels: Vec<Kernel>,
    /// Tensor layouts, by index (their `id` is the file's id).
    pub layouts: Vec<LayoutDef>,
    /// Launches in file order (autotuning launches included, flagged).
    pub launches: Vec<Launch>,
    args: Vec<Arg>,
    scalars: Vec<Scalar>,
    stats: Vec<(u32, Stats)>,
    /// For each argument with samples, in argument order: its index and
    /// where its samples start in `sample_values` (they end where the
    /// next one's start).
    samples: Vec<(u32, u32)>,
    sample_values: Vec<f64>,
    /// For each argument with row hashes (1.21), in argument order: its
    /// index and where its hashes start in `row_hashes`.
    rows: Vec<(u32, u32)>,
    row_hashes: Vec<u64>,
    /// The module paths launches ran in, each once.
    modules: Vec<String>,
    /// Process table; a later record for the same pid replaces an earlier one.
    pub processes: Vec<ProcessRecord>,
    /// User markers.
    pub markers: Vec<MarkerRecord>,
    /// Where each training step ended (1.22), and which launches are
    /// fingerprints.
    pub steps: Steps,
    /// The process groups the process became a member of, in order (1.8).
    pub process_groups: Vec<ProcessGroupRecord>,
    /// Launches captured by value (1.9), in record order.
    pub captured_values: Vec<ValuesRecord>,
    /// What the program's own hash function gave (1.10), by launch `seq`.
    pub custom_hashes: HashMap<u64, CustomHashRecord>,
    /// Pause points reached and left, in order.
    pub pauses: Vec<PauseRecord>,
    /// Compile and autotune events.
    pub compiles: Vec<CompileRecord>,
    /// What the recorder said it did not see (1.11).
    pub gaps: Vec<GapRecord>,
    /// The numerics settings as they changed while recording (1.11), in
    /// record order; before the first, the header's are in force.
    pub settings_changes: Vec<SettingsRecord>,
    /// Graph inputs, in file order.
    pub inputs: Vec<GraphInput>,
    /// The calls of compiled graphs (1.2), in file order, those without
    /// tensor inputs included.
    pub calls: Vec<GraphCall>,
    /// The CUDA graphs captured while recording (1.12), in capture order.
    pub cuda_graphs: Vec<CudaGraphRecord>,
    /// The replays of captured CUDA graphs (1.12), in order: each one's
    /// launches are in [`Trace::launches`], pointing back here.
    pub replays: Vec<Replayed>,
    /// The tensors alive when recording stopped (the program's results),
    /// or `None` when the trace does not say (before 1.3, or cut short).
    pub results: Option<Vec<LiveTensor>>,
    /// The tensors alive when recording began (1.16), each `hash` its
    /// hash then; empty when the trace does not say.
    pub held: Vec<LiveTensor>,
    /// The end record, if the recorder stopped cleanly.
    pub end: Option<EndRecord>,
    /// Set when the trace ended early.
    pub early_end: Option<EarlyEnd>,
    /// Records of kinds this reader does not know, skipped.
    pub unknown_records: u64,
    /// Each launch's `kernel_site` record, indexed at the first question
    /// (`sites.rs`).
    sites: OnceLock<FxHashMap<u32, u32>>,
}

/// One replay of a CUDA graph, its launches expanded into the trace's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replayed {
    /// The graph's id.
    pub graph: u64,
    /// Which replay of the graph, from 0.
    pub n: u64,
    /// Launches the graph holds (the replay's launches).
    pub launches: u32,
    /// Whether its table of hashes came back whole (a graph whose capture
    /// hashed nothing has an empty table).
    pub hashed: bool,
}

impl Trace {
    /// What the program raised as it ended, when its end record says it
    /// ended with an exception it did not catch: the exception's type
    /// and first line (`RuntimeError: boom`). Its run stopped there, so
    /// what another run did after that point is not missing from it.
    pub fn raised(&self) -> Option<&str> {
        self.end.as_ref()?.reason.strip_prefix("raised ")
    }

    /// Whether the run may have stopped before another one did: its trace
    /// ended early, or its program raised.
    pub fn stopped_short(&self) -> bool {
        self.early_end.is_some() || self.raised().is_some()
    }

    /// The bytes result (or held tensor) `t` covers.
    pub fn live_span(&self, t: &LiveTensor) -> crate::Span {
        let extent = self.layouts[t.layout as usize].extent;
        crate::Span::new(t.device, t.ptr, t.ptr.saturating_add(extent))
    }

    /// The memory pool CUDA graph `graph` was captured from, as its
    /// `cuda_graph` record says (1.13).
    pub fn pool_of(&self, graph: u64) -> Option<[u64; 2]> {
        self.cuda_graphs
            .iter()
            .rev()
            .find(|g| g.graph == graph)
            .and_then(|g| g.pool)
    }

    /// Whether launches `x` and `y` ran in replays of two CUDA graphs
    /// captured from one memory pool.
    pub fn share_a_pool(&self, x: &Launch, y: &Launch) -> bool {
        match (self.replay_of(x), self.replay_of(y)) {
            (Some(p), Some(q)) if p.graph != q.graph => {
                let pool = self.pool_of(p.graph);
                pool.is_some() && pool == self.pool_of(q.graph)
            }
            _ => false,
        }
    }

    /// The replay a launch ran in, if it ran in one.
    pub fn replay_of(&self, launch: &Launch) -> Option<&Replayed> {
        launch.replay.map(|i| &self.replays[i as usize])
    }

    /// The kernel of a launch.
    pub fn kernel_of(&self, launch: &Launch) -> &Kernel {
        &self.kernels[launch.kernel as usize]
    }

    /// The source of a kernel, if recorded.
    pub fn source_of(&self, kernel: &Kernel) -> Option<&Source> {
        kernel.source.map(|i| &self.sources[i as usize])
    }

    /// What the program's own hash function gave for argument `arg` of
    /// launch `seq`: its name and the values before and after (nil where
    /// not computed).
    pub fn custom_hash(&self, seq: u64, arg: usize) -> Option<(&str, &Scalar, &Scalar)> {
        let record = self.custom_hashes.get(&seq)?;
        let (_, pre, post) = record.args.iter().find(|(i, _, _)| *i as usize == arg)?;
        Some((&record.function, pre, post))
    }

    /// The arguments of a launch, decoded.
    pub fn args_of<'t>(
        &'t self,
        launch: &Launch,
    ) -> impl ExactSizeIterator<Item = ArgRef<'t>> + 't {
        let start = launch.args_start as usize;
        let end = start + launch.args_len as usize;
        (start..end).map(move |i| self.arg(i))
    }

    fn arg(&self, i: usize) -> ArgRef<'_> {
        let a = &self.args[i];
        if a.flags & SCALAR != 0 {
            return ArgRef::Scalar(&self.scalars[a.slot as usize]);
        }
        let stats = if a.flags & HAS_STATS != 0 {
            self.stats
                .binary_search_by_key(&(i as u32), |(k, _)| *k)
                .ok()
                .map(|at| self.stats[at].1)
        } else {
            None
        };
        let samples = if a.flags & HAS_SAMPLES != 0 {
            self.samples_of(i as u32)
        } else {
            None
        };
        ArgRef::Tensor(TensorRef {
            layout: &self.layouts[a.slot as usize],
            layout_index: a.slot,
            ptr: a.ptr,
            pre: (a.flags & HAS_PRE != 0).then_some(a.pre),
            post: (a.flags & HAS_POST != 0).then_some(a.post),
            written: a.flags & WRITTEN != 0,
            allocated: a.flags & ALLOCATED != 0,
            inherited: a.flags & INHERITED != 0,
            stats,
            samples,
            rows: self.rows_of(i as u32),
        })
    }

    fn samples_of(&self, arg: u32) -> Option<&[f64]> {
        spans_of(&self.samples, &self.sample_values, arg)
    }

    fn rows_of(&self, arg: u32) -> Option<&[u64]> {
        if self.rows.is_empty() {
            return None;
        }
        spans_of(&self.rows, &self.row_hashes, arg)
    }

    /// Whether the trace was recorded with row hashes (1.21, `rows`).
    pub fn has_rows(&self) -> bool {
        self.header.options.rows
    }

    /// Whether the trace was recorded with samples (1.18, `samples`).
    pub fn has_samples(&self) -> bool {
        self.header.options.samples
    }

    /// Launches made by the program itself and recorded in full: not
    /// while autotuning, and no fingerprints (`Steps::is_fingerprint`).
    pub fn program_launches(&self) -> impl Iterator<Item = (usize, &Launch)> {
        self.launches
            .iter()
            .enumerate()
            .skip(self.steps.fingerprints())
            .filter(|(_, l)| !l.autotune)
    }

    /// The fingerprints (1.22): a graph call's outputs, a host read, a
    /// collective or a step's state, recorded with `fingerprint`, in order.
    pub fn fingerprints(&self) -> impl Iterator<Item = (usize, &Launch)> {
        self.launches
            .iter()
            .enumerate()
            .take(self.steps.fingerprints())
            .filter(|(_, l)| !l.autotune)
    }
}

/// The values of argument `arg` in `values`, where `starts` holds each
/// argument's index and first value, in argument order (its values end
/// where the next one's start).
fn spans_of<'t, T>(starts: &[(u32, u32)], values: &'t [T], arg: u32) -> Option<&'t [T]> {
    let at = starts.binary_search_by_key(&arg, |(k, _)| *k).ok()?;
    let start = starts[at].1 as usize;
    let end = starts
        .get(at + 1)
        .map_or(values.len(), |(_, next)| *next as usize);
    values.get(start..end)
}

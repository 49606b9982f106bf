//! A whole trace loaded into compact, index-addressed tables.

use crate::format::{
    Access, ArgDef, ArgValue, CallRecord, CaptureRecord, CompileRecord, CudaGraphRecord,
    CustomHashRecord, EndRecord, GapRecord, GraphDef, Header, InputRecord, KernelDef, LaunchRecord,
    LayoutDef, MarkerRecord, PauseRecord, ProcessGroupRecord, ProcessRecord, Record, ReplayRecord,
    ResultsRecord, Scalar, SettingsRecord, SourceDef, Stats, TensorArg,
};
use crate::known_views::{KnownViews, Touched, view_key};
use crate::reader::{Next, RecordReader, TraceError};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
}

impl TensorRef<'_> {
    /// The byte range `[start, end)` this view covers.
    pub fn byte_range(&self) -> (u64, u64) {
        (self.ptr, self.ptr.saturating_add(self.layout.span))
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
    /// Process table; a later record for the same pid replaces an earlier one.
    pub processes: Vec<ProcessRecord>,
    /// User markers.
    pub markers: Vec<MarkerRecord>,
    /// The process groups the process became a member of, in order (1.8).
    pub process_groups: Vec<ProcessGroupRecord>,
    /// Launches captured by value (1.9), in record order.
    pub captures: Vec<CaptureRecord>,
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

/// Maps the ids a file uses to dense table indices.
#[derive(Default)]
struct IdMap {
    dense: Vec<u32>,
    sparse: HashMap<u64, u32>,
}

impl IdMap {
    const DENSE_LIMIT: u64 = 1 << 20;

    fn insert(&mut self, id: u64, index: u32) {
        if id < Self::DENSE_LIMIT {
            let id = id as usize;
            if self.dense.len() <= id {
                self.dense.resize(id + 1, u32::MAX);
            }
            self.dense[id] = index;
        } else {
            self.sparse.insert(id, index);
        }
    }

    fn get(&self, id: u64) -> Option<u32> {
        if id < Self::DENSE_LIMIT {
            self.dense
                .get(id as usize)
                .copied()
                .filter(|&i| i != u32::MAX)
        } else {
            self.sparse.get(&id).copied()
        }
    }
}

impl Trace {
    /// Memory-maps and loads the trace at `path`.
    pub fn open(path: &Path) -> Result<Trace, TraceError> {
        Self::open_with_progress(path, |_, _| {})
    }

    /// Like [`Trace::open`], calling `progress(bytes_done, bytes_total)`
    /// every few megabytes.
    pub fn open_with_progress(
        path: &Path,
        mut progress: impl FnMut(u64, u64),
    ) -> Result<Trace, TraceError> {
        let io = |error| TraceError::Io {
            path: path.to_owned(),
            error,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let metadata = file.metadata().map_err(io)?;
        if metadata.is_dir() {
            return Err(TraceError::NotATrace {
                path: path.to_owned(),
                detail: "it is a directory".into(),
            });
        }
        let len = metadata.len();
        if len == 0 {
            return Err(TraceError::NotATrace {
                path: path.to_owned(),
                detail: "the file is empty".into(),
            });
        }
        // SAFETY: the map is read-only and private; a recorder appending to
        // the file while we read cannot change the bytes already written.
        // Truncating it concurrently could fault, as with any mmap reader.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        // Pages are read once, front to back.
        let _ = map.advise(memmap2::Advice::Sequential);
        let mut released = 0;
        let trace = Self::load(path, &map, |done| {
            if done - released >= RELEASE_EVERY {
                release_pages(&map, done);
                released = done;
            }
            progress(done as u64, len);
        })?;
        progress(len, len);
        Ok(trace)
    }

    /// Loads a trace from bytes already in memory; `path` names it in errors.
    pub fn from_bytes(path: &Path, data: &[u8]) -> Result<Trace, TraceError> {
        Self::load(path, data, |_| {})
    }

    /// Decodes every record; `consumed(n)` is called every
    /// [`PROGRESS_EVERY`] bytes with the number of bytes fully processed.
    fn load(
        path: &Path,
        data: &[u8],
        mut consumed: impl FnMut(usize),
    ) -> Result<Trace, TraceError> {
        let (header, mut reader) = RecordReader::open(path, data)?;
        let mut trace = Trace {
            path: path.to_owned(),
            bytes: data.len() as u64,
            header,
            sources: Vec::new(),
            kernels: Vec::new(),
            layouts: Vec::new(),
            launches: Vec::new(),
            args: Vec::new(),
            scalars: Vec::new(),
            stats: Vec::new(),
            processes: Vec::new(),
            markers: Vec::new(),
            process_groups: Vec::new(),
            captures: Vec::new(),
            custom_hashes: HashMap::new(),
            pauses: Vec::new(),
            compiles: Vec::new(),
            gaps: Vec::new(),
            settings_changes: Vec::new(),
            inputs: Vec::new(),
            cuda_graphs: Vec::new(),
            replays: Vec::new(),
            results: None,
            held: Vec::new(),
            end: None,
            early_end: None,
            unknown_records: 0,
        };
        let mut ids = Ids::default();
        let mut last_report = 0usize;
        loop {
            let (offset, record) = match reader.next_record()? {
                Next::Record(offset, record) => (offset, record),
                Next::Truncated(offset) => {
                    trace.early_end = Some(EarlyEnd::TruncatedAt(offset));
                    break;
                }
                Next::End => {
                    if trace.end.is_none() {
                        trace.early_end = Some(EarlyEnd::NoEndRecord);
                    }
                    break;
                }
            };
            trace
                .add(record, &mut ids)
                .map_err(|detail| reader.corrupt(offset as usize, detail))?;
            let pos = reader.position() as usize;
            if pos - last_report >= PROGRESS_EVERY {
                consumed(pos);
                last_report = pos;
            }
        }
        Ok(trace)
    }

    fn add(&mut self, record: Record, ids: &mut Ids) -> Result<(), String> {
        match record {
            Record::Captured(launch) => ids.capture(launch)?,
            Record::Launch(launch) => self.add_launch(launch, ids)?,
            Record::CudaGraph(graph) => self.cuda_graphs.push(graph),
            Record::Replay(replay) => self.add_replay(replay, ids)?,
            Record::Layout(layout) => {
                ids.layouts.insert(layout.id, index(self.layouts.len())?);
                self.layouts.push(layout);
            }
            Record::Kernel(kernel) => self.add_kernel(kernel, ids)?,
            Record::Source(SourceDef {
                id,
                path,
                lang,
                text,
            }) => {
                ids.sources.insert(id, index(self.sources.len())?);
                self.sources.push(Source { path, lang, text });
            }
            Record::Process(process) => {
                match self.processes.iter_mut().find(|p| p.pid == process.pid) {
                    Some(known) => *known = process,
                    None => self.processes.push(process),
                }
            }
            Record::Marker(marker) => self.markers.push(marker),
            Record::ProcessGroup(group) => self.process_groups.push(group),
            Record::Capture(capture) => self.captures.push(capture),
            Record::CustomHash(custom) => {
                self.custom_hashes.insert(custom.seq, custom);
            }
            Record::Pause(pause) => self.pauses.push(pause),
            Record::Gap(gap) => self.gaps.push(gap),
            Record::Settings(settings) => self.settings_changes.push(settings),
            Record::Compile(compile) => self.compiles.push(compile),
            Record::Input(input) => self.add_input(input, ids)?,
            Record::Graph(graph) => ids.add_graph(graph)?,
            Record::Call(call) => self.add_call(call, ids)?,
            Record::Results(results) => self.add_results(results, ids)?,
            Record::Held(held) => self.add_held(&held, ids)?,
            Record::End(end) => self.end = Some(end),
            Record::Header(_) => return Err("a second header record".into()),
            Record::Unknown(_) => self.unknown_records += 1,
        }
        Ok(())
    }

    fn add_kernel(&mut self, kernel: KernelDef, ids: &mut Ids) -> Result<(), String> {
        let source = match kernel.source {
            None => None,
            Some(id) => Some(ids.sources.get(id).ok_or_else(|| {
                format!(
                    "kernel {:?} refers to source {id}, which is not defined before it",
                    kernel.name
                )
            })?),
        };
        ids.kernels.insert(kernel.id, index(self.kernels.len())?);
        self.kernels.push(Kernel {
            name: kernel.name,
            backend: kernel.backend,
            args: kernel.args,
            source,
            meta: kernel.meta,
            config: kernel.config,
        });
        Ok(())
    }

    fn add_input(&mut self, input: InputRecord, ids: &Ids) -> Result<(), String> {
        let ArgValue::Tensor(t) = input.tensor else {
            return Err(format!("graph input {:?} is not a tensor", input.name));
        };
        self.add_graph_input(
            input.name.into(),
            input.graph.into(),
            input.before,
            input.device,
            &t,
            ids,
        )
    }

    /// The tensors of a graph call, as graph inputs named by the graph;
    /// the first record of a call starts what is known of its views.
    fn add_call(&mut self, call: CallRecord, ids: &mut Ids) -> Result<(), String> {
        let graph = ids
            .graphs
            .get(call.graph)
            .map(|i| &ids.graph_table[i as usize])
            .ok_or_else(|| {
                format!(
                    "a call refers to graph {}, which is not defined before it",
                    call.graph
                )
            })?;
        for (j, arg) in call.args.iter().enumerate() {
            let ArgValue::Tensor(t) = arg else { continue };
            // Saturating: a corrupt `first` names inputs oddly, never panics.
            let position = call.first.saturating_add(j as u64);
            let name = usize::try_from(position)
                .ok()
                .and_then(|p| graph.inputs.get(p))
                .map_or_else(|| format!("input{position}").into(), Arc::clone);
            self.add_graph_input(
                name,
                Arc::clone(&graph.key),
                call.before,
                call.device,
                t,
                ids,
            )?;
        }
        if !self.header.options.inherited_hashes {
            return Ok(());
        }
        if call.first == 0 {
            ids.known.clear();
        }
        for arg in &call.args {
            let ArgValue::Tensor(t) = arg else { continue };
            let Some(layout) = ids.layouts.get(t.layout) else {
                continue; // no bytes known: an undefined layout
            };
            let (span, key) = self.known_view(layout);
            ids.known.input(Touched {
                ptr: t.ptr,
                span,
                key,
                allocated: false,
                value: t.pre,
            });
        }
        Ok(())
    }

    fn add_held(&mut self, record: &ResultsRecord, ids: &mut Ids) -> Result<(), String> {
        for arg in &record.args {
            let ArgValue::Tensor(t) = arg else { continue };
            let held = LiveTensor {
                device: record.device,
                layout: ids.layout_of_live(t.layout, "a held tensor")?,
                ptr: t.ptr,
                hash: t.pre,
                name: None,
                held_hash: t.pre,
            };
            ids.hold(&held);
            self.held.push(held);
        }
        Ok(())
    }

    fn add_results(&mut self, record: ResultsRecord, ids: &Ids) -> Result<(), String> {
        let results = self.results.get_or_insert_with(Vec::new);
        let tensors = record.args.iter().filter_map(|arg| match arg {
            ArgValue::Tensor(t) => Some(t),
            ArgValue::Scalar(_) => None,
        });
        for (i, t) in tensors.enumerate() {
            let layout = ids.layout_of_live(t.layout, "a result")?;
            let name = record
                .names
                .get(i)
                .filter(|name| !name.is_empty())
                .map(|name| Arc::from(name.as_str()));
            results.push(LiveTensor {
                device: record.device,
                layout,
                ptr: t.ptr,
                hash: t.pre,
                name,
                held_hash: ids
                    .held
                    .get(&(record.device, t.ptr, layout))
                    .copied()
                    .flatten(),
            });
        }
        Ok(())
    }

    fn add_graph_input(
        &mut self,
        name: Arc<str>,
        graph: Arc<str>,
        before: u64,
        device: i32,
        tensor: &TensorArg,
        ids: &Ids,
    ) -> Result<(), String> {
        let layout = ids.layouts.get(tensor.layout).ok_or_else(|| {
            format!(
                "graph input {name:?} refers to layout {}, which is not defined before it",
                tensor.layout
            )
        })?;
        self.inputs.push(GraphInput {
            name,
            graph,
            before,
            device,
            layout,
            ptr: tensor.ptr,
            hash: tensor.pre,
        });
        Ok(())
    }

    /// The span of the views of layout `index` (into [`Trace::layouts`])
    /// and the key such a view is known by in the data flow (`view_key`).
    fn known_view(&self, index: u32) -> (u64, u64) {
        let layout = &self.layouts[index as usize];
        let key = view_key(layout.id, &layout.shape, &layout.stride, layout.span);
        (layout.span, key)
    }

    fn add_launch(&mut self, launch: LaunchRecord, ids: &mut Ids) -> Result<(), String> {
        let kernel = ids.kernels.get(launch.kernel).ok_or_else(|| {
            format!(
                "launch {} refers to kernel {}, which is not defined before it",
                launch.seq, launch.kernel
            )
        })?;
        if launch.grid.len() > 3 {
            return Err(format!(
                "launch {} has a {}-dimensional grid",
                launch.seq,
                launch.grid.len()
            ));
        }
        let mut grid = [1u64; 3];
        grid[..launch.grid.len()].copy_from_slice(&launch.grid);
        let args_start = index(self.args.len())?;
        let inheriting = self.header.options.inherited_hashes;
        let mut touched = Vec::new();
        for value in launch.args {
            let arg = match value {
                ArgValue::Scalar(scalar) => {
                    self.scalars.push(scalar);
                    Arg {
                        ptr: 0,
                        pre: 0,
                        post: 0,
                        slot: index(self.scalars.len() - 1)?,
                        flags: SCALAR,
                    }
                }
                ArgValue::Tensor(t) => {
                    let layout = ids.layouts.get(t.layout).ok_or_else(|| {
                        format!(
                            "launch {} refers to layout {}, which is not defined before it",
                            launch.seq, t.layout
                        )
                    })?;
                    let mut flags = 0;
                    let mut t = t;
                    // Views are known only where hashes may be inherited.
                    let known = inheriting.then(|| self.known_view(layout));
                    if t.inherited() {
                        flags |= INHERITED;
                        if t.pre.is_none()
                            && let Some((_, key)) = known
                        {
                            t.pre = ids.known.get(t.ptr, key).copied().flatten();
                        }
                        // As the recorder does for hashes it computed: a
                        // change is a write.
                        if t.pre.is_some() && t.post.is_some() && t.pre != t.post {
                            flags |= WRITTEN;
                        }
                    }
                    if t.written() {
                        flags |= WRITTEN;
                    }
                    if t.allocated() {
                        flags |= ALLOCATED;
                    }
                    if let Some((span, key)) = known {
                        touched.push(Touched {
                            ptr: t.ptr,
                            span,
                            key,
                            allocated: t.allocated(),
                            value: t.post,
                        });
                    }
                    if t.pre.is_some() {
                        flags |= HAS_PRE;
                    }
                    if t.post.is_some() {
                        flags |= HAS_POST;
                    }
                    if let Some(stats) = t.stats {
                        flags |= HAS_STATS;
                        self.stats.push((index(self.args.len())?, stats));
                    }
                    Arg {
                        ptr: t.ptr,
                        pre: t.pre.unwrap_or(0),
                        post: t.post.unwrap_or(0),
                        slot: layout,
                        flags,
                    }
                }
            };
            self.args.push(arg);
        }
        self.launches.push(Launch {
            seq: launch.seq,
            kernel,
            grid,
            grid_dims: launch.grid.len() as u8,
            autotune: launch.autotune,
            device: launch.device,
            stream: launch.stream,
            thread: launch.thread,
            ts: launch.ts,
            replay: None,
            args_start,
            args_len: index(self.args.len())? - args_start,
        });
        // Only a trace that may inherit hashes needs what is known.
        if !touched.is_empty() {
            ids.known.after_launch(touched);
        }
        Ok(())
    }

    /// Adds the launches of one replay: its graph's captured launches, in
    /// their order, each with the hashes the replay's table holds at its
    /// slots (and written where they differ, as the recorder flags it).
    fn add_replay(&mut self, replay: ReplayRecord, ids: &mut Ids) -> Result<(), String> {
        let captured = ids.captured.remove(&replay.graph).unwrap_or_default();
        let capture_stream = self
            .cuda_graphs
            .iter()
            .find(|g| g.graph == replay.graph)
            .map(|g| g.stream);
        let replay_index = index(self.replays.len())?;
        let slot = |s: Option<u64>| -> Option<u64> {
            s.and_then(|s| usize::try_from(s).ok())
                .and_then(|s| replay.hashes.get(s).copied())
        };
        let mut result = Ok(());
        for (i, template) in captured.iter().enumerate() {
            let mut launch = template.clone();
            launch.seq = replay.first + i as u64;
            launch.ts = replay.ts;
            // A launch captured on a stream the capture forked keeps it: a
            // replay runs it on a stream of the graph's, not the replay's.
            if capture_stream.is_none_or(|stream| stream == launch.stream) {
                launch.stream = replay.stream;
            }
            launch.thread = replay.thread;
            launch.captured = None;
            for arg in &mut launch.args {
                if let ArgValue::Tensor(t) = arg {
                    t.pre = slot(t.pre);
                    t.post = slot(t.post);
                    if matches!((t.pre, t.post), (Some(a), Some(b)) if a != b) {
                        t.flags |= TensorArg::WRITTEN;
                    }
                }
            }
            result = self.add_launch(launch, ids);
            if result.is_err() {
                break;
            }
            if let Some(last) = self.launches.last_mut() {
                last.replay = Some(replay_index);
            }
        }
        self.replays.push(Replayed {
            graph: replay.graph,
            n: replay.n,
            launches: index(captured.len())?,
            hashed: replay.hashes.len() as u64 == self.slots_of(replay.graph),
        });
        ids.captured.insert(replay.graph, captured);
        result
    }

    /// The slots of a captured graph's table (the hashes each of its
    /// replays brings back), as its `cuda_graph` record says.
    fn slots_of(&self, graph: u64) -> u64 {
        self.cuda_graphs
            .iter()
            .rev()
            .find(|g| g.graph == graph)
            .map_or(u64::MAX, |g| u64::from(g.slots))
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
        })
    }

    /// Launches made by the program itself, i.e. not while autotuning.
    pub fn program_launches(&self) -> impl Iterator<Item = (usize, &Launch)> {
        self.launches
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.autotune)
    }
}

#[derive(Default)]
struct Ids {
    kernels: IdMap,
    layouts: IdMap,
    sources: IdMap,
    graphs: IdMap,
    /// The graphs defined so far; calls name their inputs from here.
    graph_table: Vec<LoadedGraph>,
    /// The views known in the current graph call, with their hashes.
    known: KnownViews<Option<u64>>,
    /// The launches captured into each CUDA graph, in their order.
    captured: HashMap<u64, Vec<LaunchRecord>>,
    /// The tensors alive when recording began (`held` records), by device,
    /// address and layout index, with their hashes then.
    held: HashMap<(i32, u64, u32), Option<u64>>,
}

impl Ids {
    /// The layout index of a tensor a `results` or `held` record lists
    /// (`what` says which, for the error).
    fn layout_of_live(&self, id: u64, what: &str) -> Result<u32, String> {
        self.layouts
            .get(id)
            .ok_or_else(|| format!("{what} refers to layout {id}, which is not defined before it"))
    }

    /// Keeps a tensor alive when recording began, for the results to find.
    fn hold(&mut self, t: &LiveTensor) {
        self.held.insert((t.device, t.ptr, t.layout), t.hash);
    }

    /// Keeps a captured launch for its graph's replays.
    fn capture(&mut self, launch: LaunchRecord) -> Result<(), String> {
        let Some(place) = launch.captured else {
            return Err(format!(
                "captured launch {} does not say which CUDA graph holds it (no `cg`)",
                launch.seq
            ));
        };
        let launches = self.captured.entry(place.graph).or_default();
        let at = launches.partition_point(|l| l.captured.is_some_and(|c| c.index <= place.index));
        launches.insert(at, launch);
        Ok(())
    }
}

/// A graph definition as calls use it.
struct LoadedGraph {
    key: Arc<str>,
    inputs: Vec<Arc<str>>,
}

impl Ids {
    fn add_graph(&mut self, graph: GraphDef) -> Result<(), String> {
        self.graphs.insert(graph.id, index(self.graph_table.len())?);
        self.graph_table.push(LoadedGraph {
            key: graph.key.into(),
            inputs: graph.inputs.into_iter().map(Arc::from).collect(),
        });
        Ok(())
    }
}

/// Bytes between two progress reports.
const PROGRESS_EVERY: usize = 4 << 20;

/// Bytes between two hints that already-decoded pages may be dropped.
const RELEASE_EVERY: usize = 32 << 20;

fn release_pages(map: &memmap2::Mmap, done: usize) {
    let aligned = done & !0xfff;
    // SAFETY: every value decoded so far was copied out of the map, so no
    // reference into these pages remains; a private read-only file mapping
    // refaults dropped pages from the file if they are touched again.
    let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, aligned) };
}

fn index(n: usize) -> Result<u32, String> {
    u32::try_from(n).map_err(|_| "more than 4 billion entries in one table".to_owned())
}

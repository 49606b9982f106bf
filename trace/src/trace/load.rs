//! The loader: records read one by one and packed into a [`Trace`]'s
//! tables, with what loading needs and the tables do not keep (interned
//! ids, graph definitions, the views known in a graph call, captured
//! launches waiting for their replays, tensors held at the start).

use super::{
    ALLOCATED, Arg, EarlyEnd, GraphCall, GraphInput, HAS_POST, HAS_PRE, HAS_SAMPLES, HAS_STATS,
    INHERITED, Kernel, Launch, LiveTensor, Replayed, SCALAR, Source, Steps, Trace, WRITTEN,
};
use crate::format::{
    ArgValue, CallRecord, GraphDef, InputRecord, KernelDef, LaunchRecord, Record, ReplayRecord,
    ResultsRecord, RowsRecord, SamplesRecord, SourceDef, TensorArg,
};
use crate::known_views::{KnownViews, Touched, view_key};
use crate::reader::{Next, RecordReader, TraceError};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

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
            samples: Vec::new(),
            sample_values: Vec::new(),
            rows: Vec::new(),
            row_hashes: Vec::new(),
            modules: Vec::new(),
            processes: Vec::new(),
            markers: Vec::new(),
            steps: Steps::default(),
            process_groups: Vec::new(),
            captured_values: Vec::new(),
            custom_hashes: HashMap::new(),
            pauses: Vec::new(),
            compiles: Vec::new(),
            gaps: Vec::new(),
            settings_changes: Vec::new(),
            inputs: Vec::new(),
            calls: Vec::new(),
            cuda_graphs: Vec::new(),
            replays: Vec::new(),
            results: None,
            held: Vec::new(),
            end: None,
            early_end: None,
            unknown_records: 0,
            sites: std::sync::OnceLock::new(),
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
        let launches = trace.launches.len();
        trace.steps.finish(&trace.header.options, launches);
        Ok(trace)
    }

    /// The samples of the launch just loaded (its record follows it).
    fn add_samples(&mut self, record: SamplesRecord) -> Result<(), String> {
        let (start, len) = self.last_launch_args(record.seq, "samples")?;
        for at in per_arg(
            record.args,
            start,
            len,
            record.seq,
            "samples",
            &mut self.samples,
            &mut self.sample_values,
        )? {
            self.args[at as usize].flags |= HAS_SAMPLES;
        }
        Ok(())
    }

    /// The row hashes of the launch just loaded (its record follows it,
    /// after its samples').
    fn add_rows(&mut self, record: RowsRecord) -> Result<(), String> {
        let (start, len) = self.last_launch_args(record.seq, "row hashes")?;
        per_arg(
            record.args,
            start,
            len,
            record.seq,
            "row hashes",
            &mut self.rows,
            &mut self.row_hashes,
        )?;
        Ok(())
    }

    /// Where the arguments of launch `seq` start and how many it has, when
    /// it is the launch just loaded (`what` follows it).
    fn last_launch_args(&self, seq: u64, what: &str) -> Result<(u32, u32), String> {
        self.launches
            .last()
            .filter(|l| l.seq == seq)
            .map(|l| (l.args_start, l.args_len))
            .ok_or_else(|| format!("{what} of launch {seq} do not follow its launch record"))
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
            Record::Step(step) => self.steps.add(step, self.launches.len()),
            Record::ProcessGroup(group) => self.process_groups.push(group),
            Record::Values(capture) => self.captured_values.push(capture),
            Record::CustomHash(custom) => {
                self.custom_hashes.insert(custom.seq, custom);
            }
            Record::Samples(samples) => self.add_samples(samples)?,
            Record::Rows(rows) => self.add_rows(rows)?,
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
        // A call's inputs may come in several records, the first at 0.
        if call.first == 0 {
            self.calls.push(GraphCall {
                graph: Arc::clone(&graph.key),
                before: call.before,
            });
        }
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
            let (extent, key) = self.known_view(layout);
            ids.known.input(Touched {
                ptr: t.ptr,
                extent,
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

    /// The extent of the views of layout `index` (into [`Trace::layouts`])
    /// and the key such a view is known by in the data flow (`view_key`).
    fn known_view(&self, index: u32) -> (u64, u64) {
        let layout = &self.layouts[index as usize];
        let key = view_key(layout.id, &layout.shape, &layout.stride, layout.extent);
        (layout.extent, key)
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
                    if let Some((extent, key)) = known {
                        touched.push(Touched {
                            ptr: t.ptr,
                            extent,
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
        let module = match launch.module {
            Some(path) => Some(match ids.modules.get(&path) {
                Some(&at) => at,
                None => {
                    let at = index(self.modules.len())?;
                    self.modules.push(path.clone());
                    ids.modules.insert(path, at);
                    at
                }
            }),
            None => None,
        };
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
            module,
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
    /// Each module path's index in `Trace::modules`.
    modules: HashMap<String, u32>,
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

/// Appends each argument's values of a record following launch `seq`
/// (whose arguments start at `start`, `len` of them) to `values`, with
/// where they start in `starts`, in argument order; an argument given
/// twice keeps its first. Returns the arguments taken.
fn per_arg<T: Copy>(
    mut args: Vec<(u32, Vec<T>)>,
    start: u32,
    len: u32,
    seq: u64,
    what: &str,
    starts: &mut Vec<(u32, u32)>,
    values: &mut Vec<T>,
) -> Result<Vec<u32>, String> {
    args.sort_by_key(|(arg, _)| *arg);
    let mut taken = Vec::with_capacity(args.len());
    for (arg, these) in args {
        if arg >= len {
            return Err(format!(
                "{what} of argument {arg} of launch {seq}, which has {len}"
            ));
        }
        let at = start + arg;
        if starts.last().is_some_and(|(last, _)| *last >= at) {
            continue; // said twice: the first stands
        }
        starts.push((at, index(values.len())?));
        values.extend_from_slice(&these);
        taken.push(at);
    }
    Ok(taken)
}

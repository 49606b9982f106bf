//! `TraceFile`: one trace written from a background thread, the process
//! table kept current beside it.
//!
//! Its state sits behind a mutex, never a borrow: a hook may fire inside
//! another (a host argument's `repr`, or a structured log event, recording
//! while a launch's arguments are described) or on another thread (a
//! collective's callback) while the state is held. A record given then is
//! queued and written by the holder before it lets go; any other call
//! from another thread waits for the holder with the GIL released.

mod reads;

use super::describe::{Described, Dtypes, Read};
use super::guard::{guard, io_error};
use super::recording_options::After;
use super::scalar::plain;
use super::thread_state::{autotuning, thread_id};
use super::trace_state::TraceState;
use crate::background::BackgroundWriter;
use crate::phases::{Phase, timed};
use crate::procs::Watcher;
use crate::recording::call_scope::CallScope;
use crate::recording::cuda_graphs::CudaGraphs;
#[cfg(feature = "cuda")]
use crate::recording::hashes::Views;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use reads::python_reads;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::Instant;
use tritontui_trace::format::{
    CallRecord, CompileRecord, CustomHashRecord, GapRecord, Header, KernelDef, LaunchRecord,
    MarkerRecord, PauseRecord, ProcessGroupRecord, Record, ResultsRecord, SettingsRecord,
    StepRecord, ValuesRecord,
};

/// Writes one trace file from a background thread.
#[pyclass(module = "tritontui._native", frozen)]
pub(crate) struct TraceFile {
    state: Mutex<TraceState>,
    /// The thread holding `state` (0: none): a call from inside the
    /// holder's own call is told from another thread's.
    holder: AtomicU64,
    /// Records given while `state` was held, oldest first.
    waiting: Mutex<Vec<Record>>,
    /// The sequence number of the next launch.
    next_seq: AtomicU64,
    /// When the session started: record times count from here.
    start: Instant,
}

/// The state of a [`TraceFile`], held by this thread until dropped.
struct Held<'a> {
    state: MutexGuard<'a, TraceState>,
    holder: &'a AtomicU64,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.holder.store(0, Ordering::Release);
    }
}

impl TraceFile {
    /// Queues one device's live tensors, described by `describe`, as the
    /// record `kind` makes of them (`results` or `held`).
    fn queue_live(
        &self,
        py: Python<'_>,
        described: &mut Described,
        names: Vec<String>,
        kind: fn(ResultsRecord) -> Record,
    ) -> PyResult<()> {
        self.with_state(py, |state| {
            let live = ResultsRecord {
                before: self.next_seq(),
                device: described.device(),
                args: std::mem::take(&mut described.args),
                names,
            };
            state.queue(kind(live), described)
        })
    }

    /// Queues a record made outside any launch. While another call holds
    /// the trace (one this record is made from inside, or another
    /// thread's), the holder writes it.
    fn queue_record(&self, py: Python<'_>, record: Record) -> PyResult<()> {
        if self.state.try_lock().is_err() {
            self.waiting
                .lock()
                .map_err(|_| poisoned_queue())?
                .push(record);
            return Ok(());
        }
        self.with_state(py, |state| {
            state.release_deferred()?;
            state.writer()?.record(record).map_err(io_error)
        })
    }

    /// Whether a compiled graph's call is running (another thread's hold
    /// waited for; yes from inside a call of this thread's, where nothing
    /// is sampled).
    pub(super) fn in_graph_call(&self, py: Python<'_>) -> bool {
        self.hold(py)
            .map_or(true, |held| held.state.scope.running())
    }

    /// An optimizer's `step()` begins (`begins`) or ends on this thread:
    /// inside it, launches inherit hashes as inside a graph call
    /// (`call_scope`); at its end, deferred hashes are enqueued.
    pub(super) fn optimizer_step(&self, py: Python<'_>, begins: bool) -> PyResult<()> {
        self.with_state(py, |state| {
            if begins {
                state.scope.begin_step(thread_id());
            } else {
                state.release_deferred()?;
                state.scope.end_step();
            }
            Ok(())
        })
    }

    /// Memory an op no launch records may have written (`(ptr, bytes)`
    /// each): no launch inherits a hash of it. (No device hash waits
    /// across such an op: hashes are deferred in graph calls only.)
    pub(super) fn forget(&self, py: Python<'_>, spans: &[(u64, u64)]) -> PyResult<()> {
        self.with_state(py, |state| {
            for &(ptr, bytes) in spans {
                state.scope.forget(ptr, bytes);
            }
            Ok(())
        })
    }

    /// Runs `f` on the state, held by this thread. Another thread's hold
    /// is waited for with the GIL released; the records queued meanwhile
    /// are written first, and those queued during `f` after it.
    fn with_state<T>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut TraceState) -> PyResult<T>,
    ) -> PyResult<T> {
        let mut held = self.hold(py)?;
        guard(|| {
            self.write_waiting(&mut held.state)?;
            let out = f(&mut held.state)?;
            self.write_waiting(&mut held.state)?;
            Ok(out)
        })
    }

    /// Takes the state for this thread.
    fn hold(&self, py: Python<'_>) -> PyResult<Held<'_>> {
        let me = thread_id();
        let state = loop {
            match self.state.try_lock() {
                Ok(state) => break state,
                Err(TryLockError::WouldBlock) => {
                    if self.holder.load(Ordering::Acquire) == me {
                        return Err(PyRuntimeError::new_err(
                            "tritontui: a trace call was made from inside another on one thread",
                        ));
                    }
                    // Waits until the holder lets go, then takes it with
                    // the GIL (another thread may come first: again).
                    py.detach(|| drop(self.state.lock()));
                }
                Err(TryLockError::Poisoned(_)) => {
                    return Err(PyRuntimeError::new_err(
                        "tritontui: the trace's lock is poisoned",
                    ));
                }
            }
        };
        self.holder.store(me, Ordering::Release);
        Ok(Held {
            state,
            holder: &self.holder,
        })
    }

    /// Writes the records queued while the state was held.
    fn write_waiting(&self, state: &mut TraceState) -> PyResult<()> {
        let waiting = std::mem::take(&mut *self.waiting.lock().map_err(|_| poisoned_queue())?);
        if waiting.is_empty() {
            return Ok(());
        }
        state.release_deferred()?;
        let writer = state.writer()?;
        for record in waiting {
            writer.record(record).map_err(io_error)?;
        }
        Ok(())
    }

    /// Nanoseconds since the trace was created.
    fn elapsed(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
}

fn poisoned_queue() -> PyErr {
    PyRuntimeError::new_err("tritontui: the trace's queue is poisoned")
}

#[pymethods]
impl TraceFile {
    /// Creates `path`, writes the header (given as a JSON object), and
    /// starts keeping the process table current (pause files of child
    /// processes are looked for in `pause_dir`).
    #[new]
    fn new(path: PathBuf, header_json: &str, pause_dir: PathBuf) -> PyResult<Self> {
        guard(|| {
            let header: Header = serde_json::from_str(header_json)
                .map_err(|e| PyValueError::new_err(format!("bad header: {e}")))?;
            let failed =
                |e: std::io::Error| PyRuntimeError::new_err(format!("{}: {e}", path.display()));
            let writer = BackgroundWriter::create(&path, &header).map_err(failed)?;
            let start = Instant::now();
            let watcher = Watcher::start(writer.sink().map_err(failed)?, &path, start, pause_dir)
                .map_err(failed)?;
            let state = TraceState {
                writer: Some(writer),
                watcher: Some(watcher),
                dtypes: Dtypes::default(),
                scope: CallScope::new(),
                defer_hashes: false,
                #[cfg(feature = "cuda")]
                deferred: Default::default(),
                device_error: None,
                cuda_graphs: CudaGraphs::default(),
                #[cfg(feature = "cuda")]
                captured: Default::default(),
                #[cfg(feature = "cuda")]
                inputs: Default::default(),
            };
            Ok(TraceFile {
                state: Mutex::new(state),
                holder: AtomicU64::new(0),
                waiting: Mutex::new(Vec::new()),
                next_seq: AtomicU64::new(0),
                start,
            })
        })
    }

    /// Queues a source record; returns its id.
    fn source(&self, py: Python<'_>, path: &str, lang: &str, text: &str) -> PyResult<u64> {
        self.with_state(py, |state| {
            state.writer()?.source(path, lang, text).map_err(io_error)
        })
    }

    /// Queues a kernel record (JSON without `id`); returns its id.
    fn kernel(&self, py: Python<'_>, kernel_json: &str) -> PyResult<u64> {
        let mut value: serde_json::Value = serde_json::from_str(kernel_json)
            .map_err(|e| PyValueError::new_err(format!("bad kernel: {e}")))?;
        if let Some(map) = value.as_object_mut() {
            map.insert("id".into(), 0.into());
        }
        let kernel: KernelDef = serde_json::from_value(value)
            .map_err(|e| PyValueError::new_err(format!("bad kernel: {e}")))?;
        self.with_state(py, |state| state.writer()?.kernel(kernel).map_err(io_error))
    }

    /// Reads the arguments of a launch before it runs: `access` holds a
    /// code per argument (`i` read, `o` written, `x` both, `a` allocated),
    /// and readable arguments are hashed when `hash_pre`, except (when
    /// `inherit`) those whose bytes the data flow of the current graph
    /// call already knows. CUDA tensors are hashed on the device on
    /// `stream` (the current stream when None) when `device_hashing`, else
    /// copied to the host. When `values` are a `launch`'s arguments and
    /// this thread captures a CUDA graph, the launch is captured: its
    /// hashes join the graph, and none is inherited.
    #[pyo3(signature = (values, access, hash_pre, device_hashing, stream=None, inherit=true, launch=false, hold=false))]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn describe(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        access: &[u8],
        hash_pre: bool,
        device_hashing: bool,
        stream: Option<u64>,
        inherit: bool,
        launch: bool,
        hold: bool,
    ) -> PyResult<Described> {
        self.describe_reads(
            py,
            python_reads(values)?,
            access,
            hash_pre,
            device_hashing,
            stream,
            inherit,
            launch,
            hold,
        )
    }

    /// Adds the results of an operation, after it ran, to `described`.
    pub(crate) fn extend(
        &self,
        py: Python<'_>,
        described: &mut Described,
        values: &Bound<'_, PyAny>,
        access: &[u8],
    ) -> PyResult<()> {
        self.extend_reads(py, described, python_reads(values)?, access)
    }

    /// Writes a fingerprint launch of `kernel` (a kernel whose definition
    /// asks for a digest) over the tensors among `values` whose bytes can
    /// be hashed, the rest left out: read and hashed now when `before` (a
    /// step's state), else hashed after when `after` asks for hashes (what
    /// a graph call returned and wrote). Each tensor is hashed once, and
    /// nothing else is taken: the writer folds the hashes into the digest
    /// and keeps nothing more of the arguments. Returns why device hashing
    /// failed, if it did. One native call for what a launch's describe and
    /// record take two, with no Python per tensor.
    fn fingerprint(
        &self,
        py: Python<'_>,
        kernel: u64,
        values: &Bound<'_, PyAny>,
        before: bool,
        device_hashing: bool,
        after: After,
    ) -> PyResult<Option<String>> {
        let values = values.try_iter()?.collect::<PyResult<Vec<_>>>()?;
        let access = vec![if before { b'i' } else { b'o' }; values.len()];
        let reads = values.into_iter().map(|value| Ok(Read::Hashable(value)));
        let mut described = self.describe_reads(
            py,
            reads,
            &access,
            before,
            device_hashing,
            None,
            false,
            false,
            false,
        )?;
        let after = After {
            hash: after.hash && !before,
            ..After::NOTHING
        };
        self.launch(
            py,
            &mut described,
            kernel,
            Vec::new(),
            0,
            thread_id(),
            after,
        )?;
        Ok(described.gpu_error())
    }

    /// Queues a launch after it ran and returns its sequence number: its
    /// arguments are hashed (summarised, sampled) as `after` asks; device
    /// results are filled in by the writer thread once they are in.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch(
        &self,
        py: Python<'_>,
        described: &mut Described,
        kernel: u64,
        grid: Vec<u64>,
        stream: u64,
        thread: u64,
        after: After,
    ) -> PyResult<u64> {
        let _timed = timed(Phase::LaunchRecord);
        self.with_state(py, |state| {
            let seq = self.next_seq.fetch_add(1, Ordering::AcqRel);
            let ts = self.elapsed();
            described.complete(py, after)?;
            if described.in_unseen_capture() {
                // It runs at replays the recorder cannot expand: a gap.
                let gap = GapRecord {
                    what: "launch".into(),
                    detail: "a launch captured into a CUDA graph whose capture began before \
                             recording (it runs only at the graph's replays, unrecorded)"
                        .into(),
                    before: seq,
                    ts,
                };
                state.writer()?.record(Record::Gap(gap)).map_err(io_error)?;
                return Ok(seq);
            }
            let captured = if described.captured(py)? {
                state.cuda_graphs.next_place()
            } else {
                None
            };
            // A captured launch's bytes are known at replays only, where
            // its table's slots hold them.
            if captured.is_none() {
                state
                    .scope
                    .after_launch(|| described.touched_after(after.hash));
            } else {
                state
                    .scope
                    .after_captured_launch(|| described.captured_after());
                // Nothing but recorded launches runs inside the graph
                // call: its hashes after it may wait for the next one's,
                // and what it writes is all the graph writes.
                #[cfg(feature = "cuda")]
                {
                    let inside = state.scope.captured_slots(thread_id()).is_some();
                    if inside {
                        state
                            .captured
                            .after_launch(&mut described.scheduled(py), thread_id());
                    }
                    if let Some(place) = &captured {
                        let writes =
                            inside.then(|| described.device_spans(Views::Written).into_iter());
                        state.cuda_graphs.captured_writes(place.graph, writes);
                    }
                }
            }
            let launch = LaunchRecord {
                seq,
                kernel,
                grid,
                stream,
                device: described.device(),
                thread,
                ts,
                autotune: autotuning(),
                captured,
                module: described.module.take(),
                args: std::mem::take(&mut described.args),
            };
            // A captured launch has a record kind of its own, which a
            // reader that knows no CUDA graph skips.
            let record = if launch.captured.is_some() {
                Record::Captured(launch)
            } else {
                Record::Launch(launch)
            };
            #[cfg(not(feature = "cuda"))]
            let record = Some(record);
            #[cfg(feature = "cuda")]
            let record = {
                let deferring = state.deferring();
                match state.writer.as_ref() {
                    Some(writer) => state
                        .deferred
                        .after_launch(record, &mut described.scheduled(py), deferring, writer)
                        .map_err(io_error)?,
                    None => Some(record),
                }
            };
            if let Some(record) = record {
                state.queue(record, described)?;
            }
            Ok(seq)
        })
    }

    /// The sequence number the next launch will get.
    #[getter]
    fn next_seq(&self) -> u64 {
        self.next_seq.load(Ordering::Acquire)
    }

    /// Nanoseconds since the trace was created: the time of every record.
    fn now(&self) -> u64 {
        self.elapsed()
    }

    /// Queues a `gap` record: `what` was not recorded, and why, before
    /// the next launch.
    fn gap(&self, py: Python<'_>, what: String, detail: String) -> PyResult<()> {
        let (before, ts) = (self.next_seq(), self.elapsed());
        self.queue_record(
            py,
            Record::Gap(GapRecord {
                what,
                detail,
                before,
                ts,
            }),
        )
    }

    /// Queues a `compile` record of this process; `info`'s values become
    /// trace scalars (`scalar::plain`).
    fn compile(
        &self,
        py: Python<'_>,
        event: String,
        name: String,
        info: &Bound<'_, PyDict>,
    ) -> PyResult<()> {
        let info = info
            .iter()
            .map(|(key, value)| Ok((key.str()?.to_str()?.to_owned(), plain(&value)?)))
            .collect::<PyResult<_>>()?;
        let compile = CompileRecord {
            event,
            name,
            pid: std::process::id(),
            ts: self.elapsed(),
            dur_ns: 0,
            info,
        };
        self.queue_record(py, Record::Compile(compile))
    }

    /// Queues a `settings` record: the numerics settings that changed,
    /// with their new values, before the next launch.
    fn settings(&self, py: Python<'_>, values: BTreeMap<String, String>) -> PyResult<()> {
        let (before, ts) = (self.next_seq(), self.elapsed());
        self.queue_record(py, Record::Settings(SettingsRecord { before, values, ts }))
    }

    /// Queues a `marker` record made on OS thread `thread`, after the
    /// last launch.
    fn marker(&self, py: Python<'_>, label: String, thread: u64) -> PyResult<()> {
        let after = self.next_seq().checked_sub(1);
        let marker = MarkerRecord {
            label,
            after,
            ts: self.elapsed(),
            thread,
        };
        self.queue_record(py, Record::Marker(marker))
    }

    /// Queues a `step` record: step `step` ended (`by` an optimizer's
    /// `step()` or the program's `tritontui.step()`), after the last launch.
    fn step(&self, py: Python<'_>, step: u64, by: String) -> PyResult<()> {
        let record = StepRecord {
            step,
            after: self.next_seq().checked_sub(1),
            by,
            ts: self.elapsed(),
        };
        self.queue_record(py, Record::Step(record))
    }

    /// Queues a `pause` record of this process (`state` `paused`, or
    /// `resumed` `by` something).
    #[pyo3(signature = (state, host, launch, kernel, resume_file, by=String::new()))]
    #[allow(clippy::too_many_arguments)]
    fn pause(
        &self,
        py: Python<'_>,
        state: String,
        host: String,
        launch: Option<u64>,
        kernel: String,
        resume_file: String,
        by: String,
    ) -> PyResult<()> {
        let pause = PauseRecord {
            state,
            pid: std::process::id(),
            host,
            launch,
            kernel,
            resume_file,
            by,
            ts: self.elapsed(),
        };
        self.queue_record(py, Record::Pause(pause))
    }

    /// Queues a `process_group` record: a group's name, description,
    /// backend and global ranks in group-rank order.
    fn process_group(
        &self,
        py: Python<'_>,
        name: String,
        desc: String,
        backend: String,
        ranks: Vec<u32>,
    ) -> PyResult<()> {
        let group = ProcessGroupRecord {
            name,
            desc,
            backend,
            ranks,
            ts: self.elapsed(),
        };
        self.queue_record(py, Record::ProcessGroup(group))
    }

    /// Queues a `capture` record: launch `seq`'s values copied into
    /// `file` (relative to the trace), `bytes` long.
    fn captured_values(&self, py: Python<'_>, seq: u64, file: String, bytes: u64) -> PyResult<()> {
        let ts = self.elapsed();
        self.queue_record(
            py,
            Record::Values(ValuesRecord {
                seq,
                file,
                bytes,
                ts,
            }),
        )
    }

    /// Queues a `custom_hash` record: what the program's hash function
    /// `function` gave for launch `seq`'s tensors, `(argument, before,
    /// after)` each, the values trace scalars (`scalar::plain`).
    fn custom_hash(
        &self,
        py: Python<'_>,
        seq: u64,
        function: String,
        args: Vec<(u32, Bound<'_, PyAny>, Bound<'_, PyAny>)>,
    ) -> PyResult<()> {
        let args = args
            .iter()
            .map(|(arg, before, after)| Ok((*arg, plain(before)?, plain(after)?)))
            .collect::<PyResult<_>>()?;
        let ts = self.elapsed();
        let hashes = CustomHashRecord {
            seq,
            function,
            args,
            ts,
        };
        self.queue_record(py, Record::CustomHash(hashes))
    }

    /// Queues one call of the compiled graph `graph` (its cache key) with
    /// its inputs described (and hashed) by `describe`: the described
    /// values are the graph's inputs from position `first` on. `names`, a
    /// list of the graph's input names, is read the first time the graph
    /// is called. `all_recorded` says whether every launch the call makes
    /// is recorded (not for a cpp_wrapper graph). `may_keep`, when given,
    /// is asked (with the inputs' device) before their hashes run beside
    /// the call, which keeps them alive until it ends: whether that may
    /// be done (`inputs_beside`).
    #[pyo3(signature = (graph, names, first, described, all_recorded, may_keep=None))]
    #[allow(clippy::too_many_arguments)]
    fn graph_call(
        &self,
        py: Python<'_>,
        graph: &str,
        names: &Bound<'_, PyAny>,
        first: u64,
        described: &mut Described,
        all_recorded: bool,
        may_keep: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let _timed = timed(Phase::GraphCall);
        self.with_state(py, |state| {
            if first == 0 {
                state.scope.begin(thread_id(), all_recorded);
            }
            state.scope.inputs(|| described.touched_inputs());
            let graph = state
                .writer()?
                .graph(graph, || {
                    names
                        .extract()
                        .map_err(|e: PyErr| std::io::Error::other(e.to_string()))
                })
                .map_err(io_error)?;
            let call = CallRecord {
                graph,
                before: self.next_seq(),
                device: described.device(),
                first,
                args: std::mem::take(&mut described.args),
            };
            #[cfg(feature = "cuda")]
            let forked = {
                let alone = state.defer_hashes && state.scope.inheritable(thread_id()).is_some();
                let keeps = |ordinal| may_keep.is_none_or(|may| keeps(may, ordinal));
                state
                    .inputs
                    .fork(&mut described.scheduled(py), alone, keeps)
                    .unwrap_or_else(|e| {
                        described.device_failed(e.to_string());
                        false
                    })
            };
            // Built without CUDA, inputs are hashed on the host, as read.
            #[cfg(not(feature = "cuda"))]
            let _ = may_keep;
            state.queue(Record::Call(call), described)?;
            #[cfg(feature = "cuda")]
            if forked && let Err(e) = state.inputs.end() {
                state.device_error.get_or_insert(e.to_string());
            }
            Ok(())
        })
    }

    /// The graph call whose inputs were queued last on this thread
    /// returned: deferred hashes are enqueued (nothing says what runs
    /// next).
    fn graph_call_end(&self, py: Python<'_>) -> PyResult<()> {
        let _timed = timed(Phase::GraphCallEnd);
        self.with_state(py, |state| {
            state.release_deferred()?;
            state.scope.end();
            Ok(())
        })
    }

    /// A CUDA graph's capture is about to begin on this thread, on device
    /// `device` and the raw stream `stream`: launches from now until
    /// [`TraceFile::cuda_graph_end`] are captured into it. Hashes deferred
    /// so far are enqueued first (outside the graph), and the graph's
    /// table is allocated now when `device_hashing`. Returns the graph's
    /// id and why its launches will have no hashes, if they will not.
    fn cuda_graph_begin(
        &self,
        py: Python<'_>,
        device: i32,
        stream: u64,
        device_hashing: bool,
    ) -> PyResult<(u64, Option<String>)> {
        self.with_state(py, |state| {
            state.release_deferred()?;
            state.scope.capture_boundary();
            Ok(state.cuda_graphs.begin(device, stream, device_hashing))
        })
    }

    /// This thread's driver capture began: the graph's first node clears
    /// its hash table. Returns why its launches will have no hashes, when
    /// that could not be done.
    fn cuda_graph_began(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.with_state(py, |state| Ok(state.cuda_graphs.began()))
    }

    /// This thread's capture is about to end: hashes carried from its last
    /// launch are enqueued now, into the graph, and the capturing stream
    /// waits for those running beside its launches.
    fn before_capture_end(&self, py: Python<'_>) -> PyResult<()> {
        self.with_state(py, |state| {
            state.release_captured();
            Ok(())
        })
    }

    /// This thread's capture ended (or failed): the graph's record is
    /// written, `missing` saying why its hashes are missing if they are,
    /// `pool` the id of the memory pool it allocated from, when known.
    #[pyo3(signature = (missing=None, pool=None))]
    fn cuda_graph_end(
        &self,
        py: Python<'_>,
        missing: Option<String>,
        pool: Option<[u64; 2]>,
    ) -> PyResult<()> {
        self.with_state(py, |state| {
            state.scope.capture_boundary();
            let Some(record) = state.cuda_graphs.end(self.elapsed(), missing, pool) else {
                return Ok(());
            };
            state
                .writer()?
                .record(Record::CudaGraph(record))
                .map_err(io_error)
        })
    }

    /// A CUDA graph is about to be replayed on the raw stream `stream`
    /// (`graph`: its id, None for one this trace did not see captured):
    /// its launches write memory without the recorder seeing them do it,
    /// so hashes deferred so far are enqueued before it, and the graph
    /// call's input hashes running beside it are waited for unless the
    /// graph writes none of their bytes (`inputs_beside`).
    fn before_replay(&self, py: Python<'_>, graph: Option<u64>, stream: u64) -> PyResult<()> {
        self.with_state(py, |state| {
            state.release_hashes()?;
            #[cfg(feature = "cuda")]
            {
                let writes = graph.and_then(|graph| state.cuda_graphs.writes(graph));
                if let Err(e) = state.inputs.before_replay(writes, stream) {
                    state.device_error.get_or_insert(e.to_string());
                }
            }
            #[cfg(not(feature = "cuda"))]
            let _ = (graph, stream);
            Ok(())
        })
    }

    /// The graph `graph` was just replayed on the raw stream `stream`: one
    /// `replay` record, its launches numbered from the next sequence
    /// number, whose hashes the writer thread reads back from the graph's
    /// table behind the replay. False for a graph whose capture this
    /// trace did not see (nothing is written).
    fn cuda_graph_replayed(&self, py: Python<'_>, graph: u64, stream: u64) -> PyResult<bool> {
        self.with_state(py, |state| {
            let Some(launches) = state.cuda_graphs.launches(graph) else {
                return Ok(false);
            };
            let first = self.next_seq.fetch_add(u64::from(launches), Ordering::AcqRel);
            let ts = self.elapsed();
            let Some(replay) = state
                .cuda_graphs
                .replayed(graph, stream, first, thread_id(), ts)
            else {
                return Ok(false);
            };
            let writer = state.writer()?;
            if let Some(error) = replay.error {
                writer
                    .record(Record::Gap(GapRecord {
                        what: "replay".into(),
                        detail: format!(
                            "replay {} of CUDA graph {graph}: its hashes could not be read back ({error})",
                            replay.record.n
                        ),
                        before: first,
                        ts,
                    }))
                    .map_err(io_error)?;
            }
            let record = Record::Replay(replay.record);
            match replay.pending {
                Some(pending) => writer.pending(record, Vec::new(), pending),
                None => writer.record(record),
            }
            .map_err(io_error)?;
            Ok(true)
        })
    }

    /// Whether device hashes inside a graph call are deferred, where
    /// they are inherited (`deferred_hashes`), and a call's input hashes
    /// may run beside it (`inputs_beside`); turned off, those deferred
    /// or running beside so far are enqueued or waited for now and their
    /// tensors let go.
    #[setter]
    fn set_defer_hashes(&self, py: Python<'_>, enabled: bool) -> PyResult<()> {
        self.with_state(py, |state| {
            if !enabled {
                state.release_deferred()?;
            }
            state.defer_hashes = enabled;
            Ok(())
        })
    }

    /// A device failure met while enqueuing deferred hashes between
    /// launches, once.
    fn take_device_error(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.with_state(py, |state| Ok(state.device_error.take()))
    }

    /// Whether a launch inside a graph call may take its hashes before
    /// from the data flow: only when every launch there is recorded and
    /// hashed before and after (the session's choice).
    #[setter]
    fn set_inherit_hashes(&self, py: Python<'_>, enabled: bool) -> PyResult<()> {
        self.with_state(py, |state| {
            state.scope.enabled = enabled;
            Ok(())
        })
    }

    /// Queues the tensors of one device still alive as recording stops
    /// (the program's results), described (and hashed) by `describe`, with
    /// what the program calls each (`""` where nothing names it).
    fn results(
        &self,
        py: Python<'_>,
        described: &mut Described,
        names: Vec<String>,
    ) -> PyResult<()> {
        let names = if names.iter().all(String::is_empty) {
            Vec::new()
        } else {
            names
        };
        self.queue_live(py, described, names, Record::Results)
    }

    /// Queues the tensors of one device alive as recording begins,
    /// described (and hashed) by `describe`: a result that still holds
    /// those bytes at the end, written by no recorded launch, is none of
    /// the recorded region's.
    fn held(&self, py: Python<'_>, described: &mut Described) -> PyResult<()> {
        self.queue_live(py, described, Vec::new(), Record::Held)
    }

    /// Waits until everything queued so far is in the file.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.with_state(py, |state| {
            state.release_deferred()?;
            let writer = state.writer()?;
            py.detach(|| guard(|| writer.flush().map_err(io_error)))
        })
    }

    /// The writer thread's I/O error, if any.
    fn error(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.with_state(py, |state| {
            Ok(state.writer.as_ref().and_then(BackgroundWriter::error))
        })
    }

    /// Writes the end record and waits until everything is in the file.
    fn close(&self, py: Python<'_>, ts: u64, reason: &str) -> PyResult<()> {
        let (writer, watcher) = self.with_state(py, |state| {
            state.release_deferred()?;
            Ok((state.writer.take(), state.watcher.take()))
        })?;
        let Some(mut writer) = writer else {
            return Ok(());
        };
        let reason = reason.to_owned();
        py.detach(|| {
            guard(|| {
                // Its last scan goes into the trace before the end record.
                if let Some(watcher) = watcher {
                    watcher.stop();
                }
                writer.finish(ts, &reason).map_err(io_error)
            })
        })
    }
}

/// Whether `may_keep` says a call's inputs on device `ordinal` may be
/// kept alive until its end (not when it fails to say).
#[cfg(feature = "cuda")]
fn keeps(may_keep: &Bound<'_, PyAny>, ordinal: i32) -> bool {
    may_keep
        .call1((ordinal,))
        .and_then(|answer| answer.is_truthy())
        .unwrap_or(false)
}

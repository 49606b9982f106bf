//! A trace writer on its own thread, so the recorded program never waits
//! for the disk.
//!
//! Callers get ids back at once (sources, kernels and layouts are numbered
//! and interned on the caller's side); records travel over a channel in
//! order, and the writer thread flushes whenever the channel runs dry, so
//! a killed process loses at most the records still in flight.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use tritontui_trace::format::{
    ArgValue, EndRecord, Header, KernelDef, LaunchRecord, Record, Scalar, Stats,
};
use tritontui_trace::writer::TraceWriter;

enum Command {
    Record(Box<Record>),
    /// A record some of whose hashes are still being computed elsewhere.
    Pending(Box<Record>, Vec<Fill>, Pending),
    /// Flush everything queued before, then say so.
    Flush(Sender<()>),
    Finish(EndRecord),
}

/// Results computed elsewhere (on a GPU), handed over when they are ready;
/// the writer thread waits for them, never the recorded program.
pub type Pending = Box<dyn FnOnce() -> Result<Vec<Delivered>, String> + Send>;

/// One result a [`Pending`] delivers.
#[derive(Debug, Clone, PartialEq)]
pub enum Delivered {
    Hash(u64),
    Stats(Stats),
    /// A tensor's samples (`tritontui_trace::samples`).
    Samples(Vec<f64>),
    /// The slot of a captured CUDA graph's table where each replay leaves
    /// this hash (a launch captured into a graph runs only at replays).
    Slot(u64),
}

/// Which field of a tensor argument a pending result fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The hash before the launch.
    Pre,
    /// The hash after it.
    Post,
    /// The summary statistics after it.
    Stats,
    /// The samples after it.
    Samples,
    /// The hashes of its rows after it (`rows`): as many results as it has
    /// rows, from the fill's index on.
    Rows,
}

/// Where one pending result goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fill {
    /// Index of the tensor argument (0 for an input record's tensor).
    pub arg: usize,
    pub field: Field,
    /// Index into the pending results.
    pub index: usize,
}

/// Puts delivered hashes into a record (a launch or a graph call; a CUDA
/// graph's replay takes them all, in slot order).
fn fill(record: &mut Record, fills: &[Fill], results: &[Delivered]) -> io::Result<()> {
    use tritontui_trace::format::TensorArg;
    if let Record::Replay(replay) = record {
        replay.hashes = results
            .iter()
            .map(|result| match result {
                Delivered::Hash(h) => Ok(*h),
                _ => Err(io::Error::other("a replay's result is not a hash")),
            })
            .collect::<io::Result<_>>()?;
        return Ok(());
    }
    let args: &mut [ArgValue] = match record {
        Record::Launch(launch) | Record::Captured(launch) => &mut launch.args,
        Record::Call(call) => &mut call.args,
        Record::Results(results) | Record::Held(results) => &mut results.args,
        _ => &mut [],
    };
    let mut tensors: Vec<&mut TensorArg> = args
        .iter_mut()
        .filter_map(|a| match a {
            ArgValue::Tensor(t) => Some(t),
            ArgValue::Scalar(_) => None,
        })
        .collect();
    for f in fills {
        let result = results
            .get(f.index)
            .ok_or_else(|| io::Error::other("a pending result is missing"))?;
        let tensor = tensors
            .get_mut(f.arg)
            .ok_or_else(|| io::Error::other("a pending result has no argument"))?;
        if f.field == Field::Rows {
            let rows = tensor
                .rows
                .as_mut()
                .ok_or_else(|| io::Error::other("row hashes have no rows"))?;
            let delivered = results
                .get(f.index..f.index + rows.len())
                .ok_or_else(|| io::Error::other("a row hash is missing"))?;
            for (place, result) in rows.iter_mut().zip(delivered) {
                let Delivered::Hash(h) = result else {
                    return Err(io::Error::other("a row's result is not a hash"));
                };
                *place = *h;
            }
            continue;
        }
        match (f.field, result) {
            (Field::Pre, Delivered::Hash(h) | Delivered::Slot(h)) => tensor.pre = Some(*h),
            (Field::Post, Delivered::Hash(h) | Delivered::Slot(h)) => tensor.post = Some(*h),
            (Field::Stats, Delivered::Stats(s)) => tensor.stats = Some(*s),
            (Field::Samples, Delivered::Samples(v)) => tensor.samples = Some(v.clone()),
            _ => return Err(io::Error::other("a pending result is of the wrong kind")),
        }
    }
    Ok(())
}

/// Sets the written flag of every tensor argument whose hash changed during
/// the launch: the one place the recorder decides it, for host and device
/// hashes alike (a `captured` record holds slots, not hashes: the reader
/// decides it for each replay).
fn mark_changed(launch: &mut LaunchRecord) {
    use tritontui_trace::format::TensorArg;
    for arg in &mut launch.args {
        if let ArgValue::Tensor(t) = arg
            && matches!((t.pre, t.post), (Some(a), Some(b)) if a != b)
        {
            t.flags |= TensorArg::WRITTEN;
        }
    }
}

/// A handle another thread can queue records with.
#[derive(Clone)]
pub struct RecordSink(Sender<Command>);

impl RecordSink {
    /// Queues a record; fails once the trace is finished.
    pub fn send(&self, record: Record) -> io::Result<()> {
        self.0
            .send(Command::Record(Box::new(record)))
            .map_err(|_| io::Error::other("the trace is finished"))
    }
}

/// Writes a trace file from a background thread.
pub struct BackgroundWriter {
    tx: Option<Sender<Command>>,
    thread: Option<JoinHandle<()>>,
    error: Arc<Mutex<Option<String>>>,
    /// Set with `error`, so that queuing checks a flag, not a lock.
    failed: Arc<AtomicBool>,
    ids: tritontui_trace::writer::Ids,
}

impl BackgroundWriter {
    /// Creates (truncates) `path`, writes `header`, and starts the thread.
    pub fn create(path: &Path, header: &Header) -> io::Result<BackgroundWriter> {
        let file = BufWriter::with_capacity(1 << 20, File::create(path)?);
        let writer = TraceWriter::new(file, header)?;
        let (tx, rx) = mpsc::channel();
        let error = Arc::new(Mutex::new(None));
        let failed = Arc::new(AtomicBool::new(false));
        let thread_error = Arc::clone(&error);
        let thread_failed = Arc::clone(&failed);
        let thread = std::thread::Builder::new()
            .name("tritontui-writer".into())
            .spawn(move || {
                if let Err(e) = drain(writer, &rx) {
                    if let Ok(mut error) = thread_error.lock() {
                        *error = Some(e.to_string());
                    }
                    thread_failed.store(true, Ordering::Release);
                }
            })?;
        Ok(BackgroundWriter {
            tx: Some(tx),
            thread: Some(thread),
            error,
            failed,
            ids: tritontui_trace::writer::Ids::default(),
        })
    }

    /// The first I/O error the writer thread met, if any.
    pub fn error(&self) -> Option<String> {
        self.error.lock().ok().and_then(|e| e.clone())
    }

    fn send(&self, command: Command) -> io::Result<()> {
        if self.failed.load(Ordering::Acquire)
            && let Some(e) = self.error()
        {
            return Err(io::Error::other(e));
        }
        let tx = self
            .tx
            .as_ref()
            .ok_or_else(|| io::Error::other("the trace is closed"))?;
        tx.send(command)
            .map_err(|_| io::Error::other("the writer thread stopped"))
    }

    /// A handle for queuing records from another thread.
    pub fn sink(&self) -> io::Result<RecordSink> {
        self.tx
            .clone()
            .map(RecordSink)
            .ok_or_else(|| io::Error::other("the trace is closed"))
    }

    /// Queues any record.
    pub fn record(&self, record: Record) -> io::Result<()> {
        self.send(Command::Record(Box::new(record)))
    }

    /// Queues a launch.
    pub fn launch(&self, launch: LaunchRecord) -> io::Result<()> {
        self.record(Record::Launch(launch))
    }

    /// Queues a record (a launch or a graph call) to be completed with
    /// results that `pending` delivers; `fills` index its tensor arguments
    /// in order and the delivered results.
    pub fn pending(&self, record: Record, fills: Vec<Fill>, pending: Pending) -> io::Result<()> {
        self.send(Command::Pending(Box::new(record), fills, pending))
    }

    /// Waits until every record queued so far is in the file (its device
    /// results included).
    pub fn flush(&self) -> io::Result<()> {
        let (done, wait) = mpsc::channel();
        self.send(Command::Flush(done))?;
        wait.recv().map_err(|_| {
            io::Error::other(self.error().unwrap_or("the writer thread stopped".into()))
        })
    }

    /// Queues a source record and returns its id.
    pub fn source(&mut self, path: &str, lang: &str, text: &str) -> io::Result<u64> {
        let (id, record) = self.ids.source(path, lang, text);
        self.record(record)?;
        Ok(id)
    }

    /// Queues a kernel record under a new id and returns it.
    pub fn kernel(&mut self, kernel: KernelDef) -> io::Result<u64> {
        let (id, record) = self.ids.kernel(kernel);
        self.record(record)?;
        Ok(id)
    }

    /// The id of the graph `key`, queuing its record (with the input names
    /// `inputs` gives) the first time.
    pub fn graph(
        &mut self,
        key: &str,
        inputs: impl FnOnce() -> io::Result<Vec<String>>,
    ) -> io::Result<u64> {
        let (id, new) = self.ids.graph(key, inputs)?;
        if let Some(record) = new {
            self.record(record)?;
        }
        Ok(id)
    }

    /// The id of a layout, queuing its record the first time.
    pub fn layout(
        &mut self,
        dtype: &str,
        itemsize: u32,
        shape: &[u64],
        stride: &[i64],
        offset: u64,
    ) -> io::Result<u64> {
        let (id, new) = self.ids.layout(dtype, itemsize, shape, stride, offset);
        if let Some(record) = new {
            self.record(record)?;
        }
        Ok(id)
    }

    /// Writes the end record, waits for everything to reach the file, and
    /// stops the thread.
    pub fn finish(&mut self, ts: u64, reason: &str) -> io::Result<()> {
        let sent = self.send(Command::Finish(EndRecord {
            ts,
            launches: 0,
            reason: reason.to_owned(),
        }));
        self.tx = None;
        if let Some(thread) = self.thread.take() {
            thread
                .join()
                .map_err(|_| io::Error::other("the writer thread panicked"))?;
        }
        sent?;
        match self.error() {
            Some(e) => Err(io::Error::other(e)),
            None => Ok(()),
        }
    }
}

impl Drop for BackgroundWriter {
    fn drop(&mut self) {
        // Without finish(), the trace keeps what was sent and has no end
        // record, as after a crash.
        self.tx = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Writes one record, flagging the launch arguments whose hash changed;
/// a launch of a kernel whose definition asks for a digest (meta `digest`:
/// a fingerprint) is written with its tensors' hashes folded into one
/// scalar argument ([`digest`]), its hashes delivered first.
fn write(
    writer: &mut TraceWriter<BufWriter<File>>,
    digested: &mut HashSet<u64>,
    mut record: Record,
) -> io::Result<()> {
    match &mut record {
        Record::Kernel(kernel) if kernel.meta.get("digest") == Some(&Scalar::Bool(true)) => {
            digested.insert(kernel.id);
        }
        Record::Launch(launch) => {
            mark_changed(launch);
            if digested.contains(&launch.kernel) {
                launch.args = vec![ArgValue::Scalar(digest(&launch.args))];
            }
        }
        _ => {}
    }
    writer.write(&record)
}

/// One hash of many tensors' hashes, in order: `tthash64-v1` of, per
/// tensor argument, a byte 1 and its hash (after the launch, else before)
/// as 8 little-endian bytes, or a byte 0 where it has none.
fn digest(args: &[ArgValue]) -> Scalar {
    let mut bytes = Vec::with_capacity(args.len() * 9);
    for arg in args {
        if let ArgValue::Tensor(t) = arg {
            match t.post.or(t.pre) {
                Some(hash) => {
                    bytes.push(1);
                    bytes.extend_from_slice(&hash.to_le_bytes());
                }
                None => bytes.push(0),
            }
        }
    }
    let hash = tritontui_trace::hash::hash_bytes(&bytes);
    i64::try_from(hash).map_or(Scalar::UInt(hash), Scalar::Int)
}

/// How long the writer thread sleeps when its queue is empty, and how
/// many such sleeps in a row it takes before it blocks until the next
/// command. While records come often it polls rather than blocks, so that
/// queuing a record never has to wake it (a system call on the recorded
/// program's thread for every launch); once the queue has stayed empty
/// that long (a recording of fingerprints, a program between steps) it
/// blocks, so that it does not wake thousands of times a second and take
/// a core from the program's threads (on a 2-core machine, a compiled
/// step's two OpenMP threads then waited for each other at every barrier).
const POLL: Duration = Duration::from_micros(500);
const IDLE_POLLS: u32 = 1;

fn drain(mut writer: TraceWriter<BufWriter<File>>, rx: &Receiver<Command>) -> io::Result<()> {
    let mut unflushed = false;
    let mut digested = HashSet::new();
    let mut idle = 0;
    loop {
        let command = match rx.try_recv() {
            Ok(command) => command,
            Err(TryRecvError::Empty) => {
                // The queue ran dry: let the OS have what we have.
                if unflushed {
                    writer.flush()?;
                    unflushed = false;
                }
                idle += 1;
                if idle <= IDLE_POLLS {
                    std::thread::sleep(POLL);
                    continue;
                }
                match rx.recv() {
                    Ok(command) => command,
                    Err(_) => return writer.flush(),
                }
            }
            Err(TryRecvError::Disconnected) => return writer.flush(),
        };
        idle = 0;
        match command {
            Command::Record(record) => write(&mut writer, &mut digested, *record)?,
            Command::Pending(mut record, fills, pending) => {
                let results = pending().map_err(io::Error::other)?;
                fill(&mut record, &fills, &results)?;
                write(&mut writer, &mut digested, *record)?;
            }
            Command::Flush(done) => {
                writer.flush()?;
                let _ = done.send(());
                continue;
            }
            Command::Finish(end) => return writer.finish(end.ts, &end.reason).map(drop),
        }
        unflushed = true;
    }
}

/// A writer on a fresh file (in the directory returned with it) with one
/// kernel and one float32[4] layout queued: their ids come back with it.
#[cfg(test)]
pub(crate) fn test_writer() -> (
    tempfile::TempDir,
    std::path::PathBuf,
    BackgroundWriter,
    u64,
    u64,
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.msgpack");
    let mut w = BackgroundWriter::create(&path, &Header::new("test")).expect("create");
    let kernel = w
        .kernel(KernelDef {
            id: 99,
            name: "k".into(),
            backend: "triton".into(),
            args: vec![],
            source: None,
            meta: Default::default(),
            config: Default::default(),
        })
        .expect("kernel");
    let layout = w.layout("float32", 4, &[4], &[1], 0).expect("layout");
    (dir, path, w, kernel, layout)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use tritontui_trace::ArgRef;
    use tritontui_trace::format::{ArgValue, Scalar};
    use tritontui_trace::trace::Trace;

    fn launch(seq: u64, kernel: u64, args: Vec<ArgValue>) -> LaunchRecord {
        LaunchRecord {
            seq,
            kernel,
            grid: vec![1],
            stream: 7,
            device: 0,
            thread: 1,
            ts: seq,
            autotune: false,
            captured: None,
            module: None,
            args,
        }
    }

    fn tensor(layout: u64, ptr: u64, pre: Option<u64>, post: Option<u64>) -> ArgValue {
        ArgValue::tensor(layout, ptr, 0, pre, post)
    }

    /// (pre, post, written) of the first and third arguments of the
    /// trace's first launch.
    type Seen = (Option<u64>, Option<u64>, bool);

    fn first_and_third(path: &Path) -> (Seen, Seen) {
        let trace = Trace::open(path).expect("load");
        let args: Vec<_> = trace.args_of(&trace.launches[0]).collect();
        match (args[0], args[2]) {
            (ArgRef::Tensor(a), ArgRef::Tensor(b)) => {
                ((a.pre, a.post, a.written), (b.pre, b.post, b.written))
            }
            other => panic!("expected tensors, got {other:?}"),
        }
    }

    #[test]
    fn records_arrive_in_order_and_the_end_is_written() {
        let (_dir, path, mut w, kernel, layout) = test_writer();
        assert_eq!(
            w.layout("float32", 4, &[4], &[1], 0).expect("again"),
            layout
        );
        for seq in 0..1000 {
            w.launch(launch(seq, kernel, vec![])).expect("launch");
        }
        w.finish(5, "exit").expect("finish");
        let trace = Trace::open(&path).expect("load");
        assert_eq!(trace.launches.len(), 1000);
        assert!(trace.launches.windows(2).all(|p| p[0].seq + 1 == p[1].seq));
        assert_eq!(trace.end.map(|e| e.reason), Some("exit".into()));
    }

    #[test]
    fn a_digest_kernels_launch_is_written_with_its_hashes_folded_into_one() {
        let (_dir, path, mut w, kernel, layout) = test_writer();
        let folded = w
            .kernel(KernelDef {
                id: 0,
                name: "step state".into(),
                backend: "tritontui".into(),
                args: vec![],
                source: None,
                meta: [("digest".to_owned(), Scalar::Bool(true))].into(),
                config: Default::default(),
            })
            .expect("kernel");
        let args = || {
            vec![
                tensor(layout, 1, Some(7), None),
                tensor(layout, 2, None, Some(u64::MAX)),
                tensor(layout, 3, None, None),
            ]
        };
        w.launch(launch(0, folded, args())).expect("launch");
        w.launch(launch(1, kernel, args())).expect("launch");
        w.finish(5, "exit").expect("finish");
        let trace = Trace::open(&path).expect("load");
        let mut bytes = vec![1];
        bytes.extend(7u64.to_le_bytes());
        bytes.push(1);
        bytes.extend(u64::MAX.to_le_bytes());
        bytes.push(0);
        let want = tritontui_trace::hash::hash_bytes(&bytes);
        let seen: Vec<_> = trace.args_of(&trace.launches[0]).collect();
        match seen[..] {
            [ArgRef::Scalar(s)] => assert!(
                matches!(*s, Scalar::UInt(v) if v == want)
                    || matches!(*s, Scalar::Int(v) if v as u64 == want),
                "{s:?}"
            ),
            ref other => panic!("one scalar expected, got {other:?}"),
        }
        // Any other kernel's launch keeps its tensors.
        assert_eq!(trace.args_of(&trace.launches[1]).len(), 3);
    }

    #[test]
    fn dropping_without_finish_leaves_a_readable_trace_without_end() {
        let (_dir, path, w, _, _) = test_writer();
        w.record(Record::Marker(tritontui_trace::format::MarkerRecord {
            label: "m".into(),
            after: None,
            ts: 0,
            thread: 0,
        }))
        .expect("marker");
        drop(w);
        let trace = Trace::open(&path).expect("load");
        assert_eq!(trace.markers.len(), 1);
        assert!(trace.early_end.is_some());
    }

    #[test]
    fn a_changed_hash_sets_written() {
        let (_dir, path, mut w, kernel, layout) = test_writer();
        let args = vec![
            tensor(layout, 16, Some(5), Some(5)),
            ArgValue::Scalar(Scalar::Int(4)),
            tensor(layout, 32, Some(6), Some(9)),
        ];
        w.launch(launch(0, kernel, args)).expect("launch");
        w.finish(1, "exit").expect("finish");
        let (a, b) = first_and_third(&path);
        assert_eq!(a, (Some(5), Some(5), false));
        assert_eq!(b, (Some(6), Some(9), true));
    }

    #[test]
    fn pending_hashes_are_filled_in_and_a_change_sets_written() {
        let (_dir, path, mut w, kernel, layout) = test_writer();
        let args = vec![
            tensor(layout, 16, None, None),
            ArgValue::Scalar(Scalar::Int(4)),
            tensor(layout, 32, None, None),
        ];
        let fill = |arg, field, index| Fill { arg, field, index };
        let fills = vec![
            fill(0, Field::Pre, 0),
            fill(0, Field::Post, 1),
            fill(1, Field::Pre, 2),
            fill(1, Field::Post, 3),
            fill(1, Field::Stats, 4),
        ];
        let summary = Stats {
            min: -1.0,
            max: 2.0,
            mean_abs: 0.5,
            nan: 1,
            inf: 0,
        };
        let results = [5, 5, 6, 9].map(Delivered::Hash).into_iter();
        let results: Vec<_> = results.chain([Delivered::Stats(summary)]).collect();
        let delivered: Pending = Box::new(move || Ok(results));
        w.pending(Record::Launch(launch(0, kernel, args)), fills, delivered)
            .expect("pending");
        w.finish(1, "exit").expect("finish");
        let (a, b) = first_and_third(&path);
        assert_eq!(a, (Some(5), Some(5), false));
        assert_eq!(b, (Some(6), Some(9), true));
        let trace = Trace::open(&path).expect("load");
        let third = trace.args_of(&trace.launches[0]).nth(2);
        let stats = match third {
            Some(ArgRef::Tensor(t)) => t.stats,
            _ => None,
        };
        assert_eq!(stats, Some(summary));
    }

    #[test]
    fn pending_hashes_of_a_graph_call_reach_its_tensors() {
        let (_dir, path, mut w, _, layout) = test_writer();
        let graph = w
            .graph("g", || Ok(vec!["a".into(), "n".into(), "b".into()]))
            .expect("graph");
        assert_eq!(w.graph("g", || unreachable!()).expect("again"), graph);
        let call = Record::Call(tritontui_trace::format::CallRecord {
            graph,
            before: 0,
            device: 0,
            first: 0,
            args: vec![
                tensor(layout, 16, None, None),
                ArgValue::Scalar(Scalar::Int(4)),
                tensor(layout, 32, None, None),
            ],
        });
        let fills = vec![
            Fill {
                arg: 0,
                field: Field::Pre,
                index: 1,
            },
            Fill {
                arg: 1,
                field: Field::Pre,
                index: 0,
            },
        ];
        let delivered: Pending = Box::new(|| Ok(vec![Delivered::Hash(7), Delivered::Hash(8)]));
        w.pending(call, fills, delivered).expect("pending");
        w.finish(1, "exit").expect("finish");
        let trace = Trace::open(&path).expect("load");
        let seen: Vec<_> = trace.inputs.iter().map(|i| (&*i.name, i.hash)).collect();
        assert_eq!(seen, vec![("a", Some(8)), ("b", Some(7))]);
    }

    #[test]
    fn one_fill_takes_a_tensor_s_row_hashes_in_order() {
        let (_dir, path, mut w, kernel, layout) = test_writer();
        let mut arg = tensor(layout, 16, None, None);
        if let ArgValue::Tensor(t) = &mut arg {
            t.rows = Some(vec![0; 3]);
        }
        let fills = vec![Fill {
            arg: 0,
            field: Field::Rows,
            index: 1,
        }];
        let delivered: Pending = Box::new(|| Ok((0..4).map(Delivered::Hash).collect()));
        w.pending(
            Record::Launch(launch(0, kernel, vec![arg])),
            fills,
            delivered,
        )
        .expect("pending");
        w.finish(1, "exit").expect("finish");
        let trace = Trace::open(&path).expect("load");
        let Some(ArgRef::Tensor(t)) = trace.args_of(&trace.launches[0]).next() else {
            panic!("a tensor argument");
        };
        assert_eq!(t.rows, Some(&[1, 2, 3][..]));
    }

    #[test]
    fn a_result_of_the_wrong_kind_is_an_error_not_a_panic() {
        let (_dir, _path, mut w, kernel, layout) = test_writer();
        let args = vec![tensor(layout, 16, None, None)];
        let fills = vec![Fill {
            arg: 0,
            field: Field::Stats,
            index: 0,
        }];
        let delivered: Pending = Box::new(|| Ok(vec![Delivered::Hash(1)]));
        w.pending(Record::Launch(launch(0, kernel, args)), fills, delivered)
            .expect("pending");
        assert!(w.finish(1, "exit").is_err());
    }
}

//! A simulated device for the scheduler's tests: every table, fork and
//! join it is asked for goes into a log ([`take_log`]), each hash an id
//! that names the launch and the view it reads, and a batch finished
//! before the table holding its hashes was enqueued fails the test (its
//! results would not be there yet on a GPU).

use super::{
    Backend, CarriedHashes, GatheredHashes, GraphHashTable, HashBatch, LaunchHashes, SideStream,
    Views,
};
use crate::background::{BackgroundWriter, Delivered, Field, Fill, Pending, test_writer};
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tritontui_trace::ArgRef;
use tritontui_trace::Span;
use tritontui_trace::format::{ArgValue, LaunchRecord, Record};
use tritontui_trace::trace::Trace;

/// What the simulated device was asked to do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A table of hashes (their ids) enqueued on a stream.
    Table { stream: u64, hashes: Vec<u64> },
    /// Captured hashes enqueued beside a graph's launches, as fork `n`.
    Fork { n: usize, hashes: Vec<u64> },
    /// The capturing stream waits for fork `n` (and those before it).
    JoinFork(usize),
    /// Work forked from this stream onto the side stream.
    SideFork(u64),
    /// The end of the work forked onto the side stream.
    SideEnd,
    /// This stream waits for the side stream.
    SideJoin(u64),
    /// The launch itself (logged by the test).
    Launch(u64),
}

thread_local! {
    static LOG: RefCell<Vec<Event>> = const { RefCell::new(Vec::new()) };
}

fn log(event: Event) {
    LOG.with(|log| log.borrow_mut().push(event));
}

/// Logs a launch running.
pub fn launched(id: u64) {
    log(Event::Launch(id));
}

/// What was logged since the last call.
pub fn take_log() -> Vec<Event> {
    LOG.with(|log| std::mem::take(&mut *log.borrow_mut()))
}

/// The side stream of every simulated device.
pub const SIDE: u64 = 9000;
/// A stream the simulated device says is capturing.
pub const CAPTURING: u64 = 666;

/// The simulated device.
pub struct Sim;

impl Backend for Sim {
    type Error = String;
    type Batch = SimBatch;
    type Gathered = SimGathered;
    type Carried = SimCarried;
    type Table = Arc<SimTable>;
    type Side = SimSide;

    fn side_of(ordinal: i32) -> Option<SimSide> {
        (ordinal >= 0).then_some(SimSide)
    }

    fn capturing(stream: u64) -> bool {
        stream == CAPTURING
    }
}

/// One hash: its id and the bytes it reads.
#[derive(Debug, Clone)]
struct Hash {
    id: u64,
    bytes: u64,
}

/// A simulated launch's batch.
pub struct SimBatch {
    stream: u64,
    /// Added since the last dispatch.
    pending: Vec<Hash>,
    /// Every hash, in the order of the results.
    results: Vec<u64>,
    /// Whether hashes wait for `finish` (a graph call's inputs).
    held: bool,
    /// The graph table of a captured batch.
    table: Option<Arc<SimTable>>,
    /// Set when the tables holding its hashes were enqueued.
    handed: Vec<Arc<AtomicBool>>,
}

impl SimBatch {
    fn add(&mut self, id: u64, bytes: u64) {
        self.pending.push(Hash { id, bytes });
        self.results.push(id);
    }

    fn dispatch(&mut self) {
        if !self.held && !self.pending.is_empty() {
            let hashes = self.pending.drain(..).map(|h| h.id).collect();
            log(Event::Table {
                stream: self.stream,
                hashes,
            });
        }
    }
}

impl HashBatch<Sim> for SimBatch {
    fn stream(&self) -> u64 {
        self.stream
    }

    fn waiting_bytes(&self) -> u64 {
        self.pending.iter().map(|h| h.bytes).sum()
    }

    fn move_to(&mut self, stream: u64) -> bool {
        self.stream = stream;
        self.held
    }

    fn gathered(&self) -> SimGathered {
        SimGathered {
            stream: self.stream,
            hashes: Vec::new(),
            enqueued: Arc::new(AtomicBool::new(false)),
        }
    }

    fn hand_to(&mut self, gathered: &mut SimGathered) -> bool {
        if gathered.stream != self.stream {
            return false;
        }
        if !self.pending.is_empty() {
            gathered.hashes.extend(self.pending.drain(..).map(|h| h.id));
            self.handed.push(Arc::clone(&gathered.enqueued));
        }
        true
    }

    fn carry(&mut self) -> Option<SimCarried> {
        let table = self.table.clone()?;
        (!self.pending.is_empty()).then(|| SimCarried {
            stream: self.stream,
            hashes: self.pending.drain(..).map(|h| h.id).collect(),
            table,
        })
    }

    fn join(&mut self, carried: SimCarried) -> Result<(), SimCarried> {
        let same_table = self
            .table
            .as_ref()
            .is_some_and(|t| Arc::ptr_eq(t, &carried.table));
        if !same_table || carried.stream != self.stream {
            return Err(carried);
        }
        let ahead = carried.hashes.into_iter().map(|id| Hash { id, bytes: 0 });
        self.pending.splice(0..0, ahead);
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<Pending, String> {
        assert!(
            self.handed.iter().all(|e| e.load(Ordering::Relaxed)),
            "a batch finished before the table holding its hashes was enqueued"
        );
        self.held = false;
        self.dispatch();
        let results = std::mem::take(&mut self.results);
        Ok(Box::new(move || {
            Ok(results.into_iter().map(Delivered::Hash).collect())
        }))
    }
}

/// Hashes gathered on one stream.
pub struct SimGathered {
    stream: u64,
    hashes: Vec<u64>,
    enqueued: Arc<AtomicBool>,
}

impl GatheredHashes<Sim> for SimGathered {
    fn len(&self) -> usize {
        self.hashes.len()
    }

    fn enqueue(&mut self) -> Result<(), String> {
        if !self.hashes.is_empty() {
            log(Event::Table {
                stream: self.stream,
                hashes: std::mem::take(&mut self.hashes),
            });
        }
        self.enqueued.store(true, Ordering::Relaxed);
        self.enqueued = Arc::new(AtomicBool::new(false));
        Ok(())
    }
}

/// Captured hashes on their way to the next captured launch.
pub struct SimCarried {
    stream: u64,
    hashes: Vec<u64>,
    table: Arc<SimTable>,
}

impl CarriedHashes<Sim> for SimCarried {
    fn enqueue(self) -> Result<(), String> {
        log(Event::Table {
            stream: self.stream,
            hashes: self.hashes,
        });
        Ok(())
    }

    fn enqueue_beside(self, n: usize) -> Result<Result<(), String>, String> {
        log(Event::Fork {
            n,
            hashes: self.hashes,
        });
        Ok(Ok(()))
    }

    fn table(&self) -> Arc<SimTable> {
        Arc::clone(&self.table)
    }

    fn stream(&self) -> u64 {
        self.stream
    }
}

/// A captured graph's table.
pub struct SimTable {
    /// The stream its capture began on.
    pub origin: u64,
    pub has_side: bool,
}

impl GraphHashTable<Sim> for Arc<SimTable> {
    fn has_side(&self) -> bool {
        self.has_side
    }

    fn origin(&self) -> u64 {
        self.origin
    }

    fn join(&self, n: usize) -> Result<(), String> {
        log(Event::JoinFork(n));
        Ok(())
    }
}

/// A device's side stream.
#[derive(Clone, Copy)]
pub struct SimSide;

impl SideStream<Sim> for SimSide {
    fn fork(self, origin: u64) -> Result<u64, String> {
        log(Event::SideFork(origin));
        Ok(SIDE)
    }

    fn end(self) -> Result<(), String> {
        log(Event::SideEnd);
        Ok(())
    }

    fn join(self, stream: u64) -> Result<(), String> {
        log(Event::SideJoin(stream));
        Ok(())
    }
}

/// How a simulated launch uses one view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    Read,
    Write,
    ReadWrite,
}

impl Use {
    fn hashed_before(self) -> bool {
        self != Use::Write
    }

    fn written(self) -> bool {
        self != Use::Read
    }
}

/// The id of the hash of view `view` of launch `launch`, before or after
/// it: `launch * 100 + view`, plus 50 after.
pub fn hash_id(launch: u64, view: usize, after: bool) -> u64 {
    launch * 100 + view as u64 + if after { 50 } else { 0 }
}

/// A simulated launch: views of device 0 (a span, its use), hashed before
/// (those it reads) and after (all), on one stream.
pub struct SimLaunch {
    pub id: u64,
    views: Vec<(Span, Use)>,
    batch: Option<Box<SimBatch>>,
    fills: Vec<Fill>,
    failed: Option<String>,
}

impl SimLaunch {
    /// A launch on `stream` whose hashes before it are in its batch.
    pub fn before(id: u64, stream: u64, views: &[(u64, u64, Use)]) -> SimLaunch {
        Self::with_batch(id, stream, views, false, None)
    }

    /// A launch captured into `table`'s graph on `stream`.
    pub fn captured(
        id: u64,
        stream: u64,
        views: &[(u64, u64, Use)],
        table: &Arc<SimTable>,
    ) -> SimLaunch {
        Self::with_batch(id, stream, views, false, Some(Arc::clone(table)))
    }

    /// A graph call's inputs on `stream`, their hashes held until its
    /// batch is finished.
    pub fn inputs(id: u64, stream: u64, views: &[(u64, u64, Use)]) -> SimLaunch {
        Self::with_batch(id, stream, views, true, None)
    }

    fn with_batch(
        id: u64,
        stream: u64,
        views: &[(u64, u64, Use)],
        held: bool,
        table: Option<Arc<SimTable>>,
    ) -> SimLaunch {
        let mut batch = SimBatch {
            stream,
            pending: Vec::new(),
            results: Vec::new(),
            held,
            table,
            handed: Vec::new(),
        };
        let mut fills = Vec::new();
        let views: Vec<(Span, Use)> = views
            .iter()
            .map(|&(start, end, u)| (Span::new(0, start, end), u))
            .collect();
        for (arg, (span, u)) in views.iter().enumerate() {
            if u.hashed_before() {
                fills.push(Fill {
                    arg,
                    field: Field::Pre,
                    index: batch.results.len(),
                });
                batch.add(hash_id(id, arg, false), span.end - span.start);
            }
        }
        SimLaunch {
            id,
            views,
            batch: Some(Box::new(batch)),
            fills,
            failed: None,
        }
    }

    /// After the launch ran: its hashes after it join its batch.
    pub fn after(&mut self) {
        let Some(batch) = self.batch.as_mut() else {
            return;
        };
        for (arg, (span, _)) in self.views.iter().enumerate() {
            self.fills.push(Fill {
                arg,
                field: Field::Post,
                index: batch.results.len(),
            });
            batch.add(hash_id(self.id, arg, true), span.end - span.start);
        }
    }

    /// How many views it has.
    pub fn arity(&self) -> usize {
        self.views.len()
    }
}

impl LaunchHashes<Sim, u64> for SimLaunch {
    fn device(&self) -> i32 {
        0
    }

    fn stream(&self) -> Option<u64> {
        self.batch.as_ref().map(|b| b.stream)
    }

    fn spans(&self, which: Views) -> Vec<Span> {
        self.views
            .iter()
            .filter(|(_, u)| match which {
                Views::HashedBefore => u.hashed_before(),
                Views::HashedAfter => true,
                Views::Written => u.written(),
            })
            .map(|(span, _)| *span)
            .collect()
    }

    fn has_device_work(&self) -> bool {
        self.batch.is_some() || self.failed.is_some()
    }

    fn batch_mut(&mut self) -> Option<&mut SimBatch> {
        if self.failed.is_some() {
            return None;
        }
        self.batch.as_deref_mut()
    }

    fn take_batch(&mut self) -> Option<Box<SimBatch>> {
        let batch = self.batch.take();
        if self.failed.is_some() {
            return None;
        }
        batch
    }

    fn take_fills(&mut self) -> Vec<Fill> {
        std::mem::take(&mut self.fills)
    }

    fn keep_alive(&self) -> u64 {
        self.id
    }

    fn device_failed(&mut self, error: String) {
        self.failed.get_or_insert(error);
    }

    fn dispatch(&mut self) {
        if let Some(batch) = self.batch.as_mut() {
            batch.dispatch();
        }
    }
}

/// A trace the simulated launches are written to.
pub struct SimTrace {
    _dir: tempfile::TempDir,
    path: PathBuf,
    pub writer: BackgroundWriter,
    kernel: u64,
    layout: u64,
}

/// One launch as read back: its sequence number and each tensor's hashes
/// (before, after).
pub type ReadBack = (u64, Vec<(Option<u64>, Option<u64>)>);

impl SimTrace {
    pub fn new() -> SimTrace {
        let (dir, path, writer, kernel, layout) = test_writer();
        SimTrace {
            _dir: dir,
            path,
            writer,
            kernel,
            layout,
        }
    }

    /// The record of `launch`, its hashes to be filled in.
    pub fn record(&self, launch: &SimLaunch) -> Record {
        let args = (0..launch.arity())
            .map(|arg| ArgValue::tensor(self.layout, arg as u64 * 64, 0, None, None))
            .collect();
        Record::Launch(LaunchRecord {
            seq: launch.id,
            kernel: self.kernel,
            grid: vec![1],
            stream: launch.stream().unwrap_or(0),
            device: 0,
            thread: 1,
            ts: launch.id,
            autotune: false,
            captured: None,
            module: None,
            args,
        })
    }

    /// Queues `record` now, its results once `launch`'s batch is finished
    /// (what the trace file does with a record no strategy holds).
    pub fn queue(&self, record: Record, launch: &mut SimLaunch) {
        let fills = launch.take_fills();
        match launch.take_batch() {
            Some(batch) if !fills.is_empty() => {
                let pending = batch.finish().expect("finish");
                self.writer.pending(record, fills, pending)
            }
            _ => self.writer.record(record),
        }
        .expect("queue");
    }

    /// Every launch written, in order.
    pub fn read_back(mut self) -> Vec<ReadBack> {
        self.writer.finish(0, "stopped").expect("finish");
        let trace = Trace::open(&self.path).expect("open");
        trace
            .launches
            .iter()
            .map(|launch| {
                let hashes = trace
                    .args_of(launch)
                    .map(|arg| match arg {
                        ArgRef::Tensor(t) => (t.pre, t.post),
                        other => panic!("not a tensor: {other:?}"),
                    })
                    .collect();
                (launch.seq, hashes)
            })
            .collect()
    }
}

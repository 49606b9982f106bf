//! `tthash64-v1` of CUDA tensors, computed on the device, on the stream of
//! the launch being recorded, without the recorded program ever waiting.
//!
//! A launch's hashes form a [`Batch`]: a range of result slots in a
//! per-device ring. Hashes are gathered into a table and enqueued as one
//! kernel launch ([`Batch::dispatch`]: before the recorded launch for its
//! inputs, after it for its outputs); the blocks of each hash add into a
//! device accumulator and the last one writes the total into host-mapped
//! memory, resetting the accumulator, so no memset or copy is needed. After
//! the launch one pooled event is recorded: three driver calls per launch
//! with hashes before and after. A result's slot is its index in the whole
//! ring, so one table launch may also hash for several batches on one
//! stream ([`Gathered`], for hashes deferred inside a graph call); each
//! such batch records its event after it. The writer thread polls the mapped slots
//! until every result has arrived ([`Finished::wait`], asking the event now
//! and then) and finalises the sums.
//!
//! The kernels are PTX kept in `assets/cuda/` (compiled by the driver for
//! the GPU at hand), so no CUDA toolkit is needed. Every entry point checks
//! that the driver library loads before calling into it, because cudarc
//! panics rather than failing when it does not.

mod beside;
mod device;
mod driver;
mod graph_table;
mod layout;
mod rows;
mod share;

pub use beside::Beside;
pub use driver::{GpuError, driver_present, stream_capturing};
pub use graph_table::{FORKS, GRAPH_SLOTS, GraphTable, ReadBack};

use device::{BATCH, Kernels, RANGES, Results, Returned, THREADS, UNWRITTEN, device};
use driver::{Result, make_current, poisoned, relax_capture_mode};
use share::{Want, share_blocks};

use crate::background::Delivered;
use crate::phases::{Phase, timed};
use crate::stats::Summary;
use cudarc::driver::result;
use cudarc::driver::sys;
use layout::{Dims, Layout, Read, coalesce, dims, reading};
use smallvec::SmallVec;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tritontui_trace::hash::{LEN_MUL, fmix64};

/// Slots a summary of one tensor takes (see `ttstats` in the PTX source).
pub const STATS_SLOTS: usize = 69;
/// How long a thread waiting for a batch sleeps between polls.
const POLL: std::time::Duration = std::time::Duration::from_micros(50);
/// How often a waiting thread asks the driver about the batch's event
/// while its results have not all arrived.
const ASK_DRIVER: std::time::Duration = std::time::Duration::from_millis(2);
/// The longest a batch waits for its range of the ring to come free.
const RANGE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
/// Hashes one `tthash_table` launch computes (`TABLE_ITEMS` in the source).
const TABLE_ITEMS: usize = 16;

/// The hashes of one launch, being computed on the device.
pub struct Batch {
    kernels: Kernels,
    /// The raw `CUstream`, kept as an integer.
    stream: u64,
    range: usize,
    /// The whole ring's result pointers: a hash's slot is its index in the
    /// ring, so that one table launch may hash for several batches.
    ring: Results,
    /// This batch's range of the host-mapped results.
    host: *mut u64,
    returned: Arc<Returned>,
    /// Whether the range is handed on to a [`Finished`].
    finished: bool,
    /// Whether a kernel was enqueued (it writes into the range).
    dispatched: bool,
    entries: SmallVec<[Entry; TABLE_ITEMS]>,
    /// Hashes gathered for the next [`Batch::dispatch`].
    table: SmallVec<[Item; TABLE_ITEMS]>,
    /// Slots of the range handed out so far.
    used: usize,
    /// The table of the graph being captured on the stream, whose slots
    /// this batch's hashes take instead of a range of the ring.
    graph: Option<Arc<GraphTable>>,
    /// Whether its hashes wait for [`Batch::dispatch`] however many there
    /// are ([`Batch::hold`]).
    held: bool,
}

// SAFETY: see `Device`; the range of the ring belongs to this batch alone,
// and a shared `&Batch` allows nothing but reading its handles.
unsafe impl Send for Batch {}
unsafe impl Sync for Batch {}

/// What one request of a batch delivers, from which slots.
#[derive(Debug, Clone, Copy)]
enum Entry {
    /// A hash of `len` bytes, from one slot.
    Hash { slot: usize, len: u64 },
    /// A summary, from [`STATS_SLOTS`] slots.
    Stats { slot: usize },
    /// Samples, one float32 each, from `count` slots.
    Samples { slot: usize, count: usize },
}

/// The float formats the summary kernel reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatsKind {
    Float32 = 0,
    Float16 = 1,
    BFloat16 = 2,
}

impl StatsKind {
    /// The kind of a dtype name, if the GPU summarises it.
    pub fn of(dtype: &str) -> Option<StatsKind> {
        match dtype {
            "float32" => Some(StatsKind::Float32),
            "float16" => Some(StatsKind::Float16),
            "bfloat16" => Some(StatsKind::BFloat16),
            _ => None,
        }
    }

    fn itemsize(self) -> u64 {
        if self == StatsKind::Float32 { 4 } else { 2 }
    }
}

/// Hashes a captured batch took and did not enqueue (those after its
/// launch), carried to the next launch captured on the same stream into
/// the same graph: its table kernel enqueues them first, so that one graph
/// node hashes after one launch and before the next.
pub struct Carried {
    kernels: Kernels,
    stream: u64,
    ring: Results,
    table: Arc<GraphTable>,
    items: Vec<Item>,
}

// SAFETY: see `Batch`: handles, and hashes of memory the graph's pool keeps.
unsafe impl Send for Carried {}

impl Carried {
    /// Enqueues the carried hashes on their own (nothing captured on their
    /// stream may run before them).
    pub fn enqueue(self) -> Result<()> {
        // SAFETY: every item was made by `Batch::hash` on this device.
        let launched =
            unsafe { enqueue_table(&self.kernels, self.stream, self.ring, &self.items)? };
        self.table.add_kernels(launched);
        Ok(())
    }

    /// Enqueues the carried hashes beside the graph's launches, as fork `n`
    /// of its table ([`GraphTable::fork`]: the outer error says no branch
    /// began, the inner one that its kernels failed). They must have been
    /// captured on the stream the capture began on.
    pub fn enqueue_beside(self, n: usize) -> Result<Result<()>> {
        self.table.fork(n, |side| {
            // SAFETY: every item was made by `Batch::hash` on this device.
            let launched = unsafe { enqueue_table(&self.kernels, side, self.ring, &self.items)? };
            TABLE_LAUNCHES_BESIDE.fetch_add(u64::from(launched), Ordering::Relaxed);
            Ok(launched)
        })
    }

    /// The graph table the hashes write into.
    pub fn table(&self) -> &Arc<GraphTable> {
        &self.table
    }

    /// The stream they were captured on.
    pub fn stream(&self) -> u64 {
        self.stream
    }
}

/// A batch whose results are on their way to the host.
pub struct Finished {
    ctx: sys::CUcontext,
    event: sys::CUevent,
    host: *const u64,
    entries: SmallVec<[Entry; TABLE_ITEMS]>,
    returned: Arc<Returned>,
    range: usize,
}

// SAFETY: see `Device`; the event and host range belong to this batch alone.
unsafe impl Send for Finished {}

/// `Item` in the PTX source: one hash of a table.
#[repr(C)]
#[derive(Clone, Copy)]
struct Item {
    data: u64,
    numel: u64,
    /// [`Read::Elements`], [`Read::Columns`]: bytes between a word's
    /// elements.
    element_stride: u64,
    itemsize: u32,
    layout: Layout,
    read: Read,
    ndim: u32,
    slot: u32,
    first_block: u32,
    /// Until the table is enqueued: the most blocks the hash can use (a
    /// [`Layout::Strided`] hash: the blocks it gets).
    blocks: u32,
    /// [`Layout::Words`]: words per index computation.
    run: u32,
    dims: Dims,
}

impl Item {
    /// The hash of `numel` elements of `itemsize` bytes at `ptr`, read as
    /// `reading` says, into result `slot`, with at most `blocks` blocks.
    fn read_as(
        reading: &layout::Reading,
        ptr: u64,
        numel: u64,
        itemsize: u64,
        slot: u32,
        blocks: u32,
    ) -> Item {
        Item {
            data: ptr,
            numel,
            element_stride: reading.element_stride,
            itemsize: itemsize as u32,
            layout: reading.layout,
            read: reading.read,
            ndim: reading.ndim,
            slot,
            first_block: 0,
            blocks,
            run: reading.run,
            dims: reading.dims,
        }
    }

    fn nbytes(&self) -> u64 {
        self.numel * u64::from(self.itemsize)
    }

    /// What the hash asks of its table launch's blocks: contiguous and
    /// word hashes share the launch's wave by bytes, a strided hash keeps
    /// its own.
    fn want(&self) -> Want {
        Want {
            bytes: self.nbytes(),
            most: self.blocks,
            fixed: self.layout == Layout::Strided,
        }
    }
}

/// `Table` in the PTX source, passed by value.
#[repr(C)]
struct Table {
    results: Results,
    count: u32,
    items: [Item; TABLE_ITEMS],
}

// A kernel's parameters may take at most 4 KiB.
const _: () = assert!(std::mem::size_of::<Table>() <= 4096);

impl Batch {
    /// Reserves result slots on `ordinal` for work on `stream` (a raw
    /// `cudaStream_t`, 0 for the legacy default stream). Waits only if
    /// every range is still in use.
    pub fn begin(ordinal: i32, stream: u64) -> Result<Batch> {
        let device = device(ordinal)?;
        make_current(device.kernels.ctx)?;
        let range = device.next.fetch_add(1, Ordering::Relaxed) % RANGES;
        {
            let free = device.returned.ranges.lock().map_err(poisoned)?;
            let (mut free, waited) = device
                .returned
                .released
                .wait_timeout_while(free, RANGE_WAIT, |free| !free[range])
                .map_err(poisoned)?;
            if waited.timed_out() {
                return Err(GpuError(
                    "no result range came free (earlier batches never completed)".into(),
                ));
            }
            free[range] = false;
        }
        Ok(Batch {
            kernels: device.kernels,
            stream,
            range,
            // SAFETY: the range lies inside the mapped ring.
            host: unsafe { device.host.add(range * BATCH) },
            returned: Arc::clone(&device.returned),
            finished: false,
            dispatched: false,
            ring: device.ring(),
            entries: SmallVec::new(),
            table: SmallVec::new(),
            used: 0,
            graph: None,
            held: false,
        })
    }

    /// Hashes for launches being captured into a graph on `stream`: their
    /// kernels join the graph and write into `table` at every replay, and
    /// the batch delivers the slots they write ([`Delivered::Slot`]).
    /// Takes no range of the ring, allocates nothing and records no event.
    pub fn begin_captured(stream: u64, table: Arc<GraphTable>) -> Result<Batch> {
        let device = device(table.ordinal())?;
        Ok(Batch {
            kernels: device.kernels,
            stream,
            range: 0,
            ring: table.results(),
            host: std::ptr::null_mut(),
            returned: Arc::clone(&device.returned),
            finished: false,
            dispatched: false,
            entries: SmallVec::new(),
            table: SmallVec::new(),
            used: 0,
            graph: Some(table),
            held: false,
        })
    }

    /// Slot `slot` of this batch's range, as an index into the ring (a
    /// captured batch's slots are its graph table's already).
    fn ring_slot(&self, slot: usize) -> u32 {
        if self.graph.is_some() {
            return slot as u32;
        }
        (self.range * BATCH + slot) as u32
    }

    /// The next `n` free slots of the batch, or None when it is full.
    fn take_slots(&mut self, n: usize) -> Option<usize> {
        if self.used + n > BATCH {
            return None;
        }
        let slot = self.used;
        self.used += n;
        Some(slot)
    }

    /// Adds the hash of a view of device memory to the table the next
    /// [`Batch::dispatch`] launches; returns its index in the batch, or
    /// None when the batch has no slot left.
    ///
    /// # Safety
    /// `ptr` must be the address of the first element of a live device
    /// allocation covering the view, in the current device's context, and
    /// stay valid until the work on the stream has run.
    pub unsafe fn hash(
        &mut self,
        ptr: u64,
        itemsize: u64,
        shape: &[u64],
        stride: &[u64],
    ) -> Result<Option<usize>> {
        let numel: u64 = shape.iter().product();
        let nbytes = numel * itemsize;
        let taken = match &self.graph {
            Some(graph) => graph.take_slot(nbytes),
            None => self.take_slots(1),
        };
        let Some(slot) = taken else {
            return Ok(None);
        };
        let (shape, stride) = coalesce(shape, stride);
        let reading = reading(ptr, itemsize, &shape, &stride)?;
        // Every hash gets at least one block: it writes the result, 0 for
        // no bytes. Contiguous and word hashes get their share of the
        // table's blocks when it is enqueued (`share_blocks`), at most a
        // block per 16-byte chunk or run of words of every thread.
        let units = match reading.layout {
            // `reading` gives no rows: they become a table's item in
            // `Batch::rows`.
            Layout::Contiguous | Layout::Rows => nbytes / 16,
            Layout::Words => nbytes / 8 / u64::from(reading.run),
            Layout::Strided => nbytes.div_ceil(8),
        };
        let blocks = units.div_ceil(u64::from(THREADS));
        let item = Item::read_as(
            &reading,
            ptr,
            numel,
            itemsize,
            self.ring_slot(slot),
            self.blocks(blocks),
        );
        self.table.push(item);
        if self.table.len() == TABLE_ITEMS && !self.held {
            self.dispatch()?;
        }
        self.entries.push(Entry::Hash { slot, len: nbytes });
        Ok(Some(self.entries.len() - 1))
    }

    /// Keeps every hash until [`Batch::dispatch`] (or `finish`), so that the
    /// caller may still choose the stream they run on ([`Batch::move_to`]).
    pub fn hold(mut self) -> Batch {
        self.held = true;
        self
    }

    /// The stream its kernels are enqueued on.
    pub fn stream(&self) -> u64 {
        self.stream
    }

    /// The bytes the hashes not yet enqueued read.
    pub fn waiting_bytes(&self) -> u64 {
        self.table.iter().map(Item::nbytes).sum()
    }

    /// Has the batch's kernels and results event enqueued on `stream`
    /// instead (a stream of the same device); false, changing nothing,
    /// once a kernel of it was enqueued or for a captured batch.
    pub fn move_to(&mut self, stream: u64) -> bool {
        if self.dispatched || self.graph.is_some() {
            return false;
        }
        self.stream = stream;
        true
    }

    /// A captured batch's hashes not yet enqueued, taken to be enqueued
    /// with the next captured launch's ([`Batch::join`]); None for a batch
    /// that is not captured, or has none.
    pub fn carry(&mut self) -> Option<Carried> {
        let table = Arc::clone(self.graph.as_ref()?);
        if self.table.is_empty() {
            return None;
        }
        Some(Carried {
            kernels: self.kernels,
            stream: self.stream,
            ring: self.ring,
            table,
            items: std::mem::take(&mut self.table).into_vec(),
        })
    }

    /// Puts `carried` ahead of this batch's hashes, to be enqueued with
    /// them, when both are captured on one stream into one graph's table;
    /// gives them back otherwise.
    pub fn join(&mut self, carried: Carried) -> std::result::Result<(), Carried> {
        let same = self
            .graph
            .as_ref()
            .is_some_and(|table| Arc::ptr_eq(table, &carried.table))
            && self.stream == carried.stream;
        if !same {
            return Err(carried);
        }
        let mut items = SmallVec::from_vec(carried.items);
        items.extend(self.table.drain(..));
        self.table = items;
        Ok(())
    }

    /// The graph table slot the hash `ticket` (an index [`Batch::hash`]
    /// returned) writes at every replay; None for a batch that is not
    /// captured.
    pub fn captured_slot(&self, ticket: usize) -> Option<u64> {
        self.graph.as_ref()?;
        match self.entries.get(ticket)? {
            Entry::Hash { slot, .. } => Some(*slot as u64),
            Entry::Stats { .. } | Entry::Samples { .. } => None,
        }
    }

    /// Enqueues the hashes added since the last dispatch as one kernel
    /// launch on the batch's stream.
    pub fn dispatch(&mut self) -> Result<()> {
        if self.table.is_empty() {
            return Ok(());
        }
        self.dispatched = true;
        let items = std::mem::take(&mut self.table);
        // SAFETY: every item was handed in under `hash`'s contract.
        let launched = unsafe { enqueue_table(&self.kernels, self.stream, self.ring, &items)? };
        if let Some(graph) = &self.graph {
            graph.add_kernels(launched);
        }
        Ok(())
    }

    /// Hands the hashes added since the last dispatch to `gathered`, to be
    /// enqueued with others; false (nothing handed) when `gathered` is for
    /// another stream. The batch's results then arrive once `gathered` is
    /// enqueued: [`Batch::finish`] must come after [`Gathered::enqueue`].
    pub fn hand_to(&mut self, gathered: &mut Gathered) -> bool {
        if gathered.stream != self.stream || gathered.kernels.ctx != self.kernels.ctx {
            return false;
        }
        if !self.table.is_empty() {
            // Its range will be written, whatever becomes of this batch.
            self.dispatched = true;
            gathered.items.extend(self.table.drain(..));
        }
        true
    }

    /// Blocks for `work` blocks' worth of data: at least one, at most 16
    /// per multiprocessor.
    fn blocks(&self, work: u64) -> u32 {
        work.clamp(1, u64::from(self.kernels.max_blocks)) as u32
    }

    /// Enqueues the summary statistics or the samples
    /// (`tritontui_trace::samples`) of a float view; returns its index in
    /// the batch, or None when the batch has no room for it (a captured
    /// graph's table holds hashes only).
    ///
    /// # Safety
    /// As for [`Batch::hash`].
    pub unsafe fn summarize(
        &mut self,
        summary: Summary,
        ptr: u64,
        kind: StatsKind,
        shape: &[u64],
        stride: &[u64],
    ) -> Result<Option<usize>> {
        let numel: u64 = shape.iter().product();
        let count = match summary {
            Summary::Stats => STATS_SLOTS,
            Summary::Samples => tritontui_trace::samples::SAMPLES.min(numel) as usize,
        };
        if self.graph.is_some() || count == 0 {
            return Ok(None);
        }
        let Some(slot) = self.take_slots(count) else {
            return Ok(None);
        };
        let (shape, stride) = coalesce(shape, stride);
        let (mut ndim, mut dims) = dims(&shape, &stride)?;
        let (mut data, mut numel_param, mut results) = (ptr, numel, self.ring);
        let (mut kind_param, mut slot_param) = (kind as i32, self.ring_slot(slot));
        let mut count_param = count as u32;
        // `ttsample` takes the count last; `ttstats` takes the first seven
        // (the driver reads as many parameters as the kernel declares).
        let params = [
            &mut data as *mut u64 as *mut c_void,
            &mut numel_param as *mut u64 as *mut c_void,
            &mut kind_param as *mut i32 as *mut c_void,
            &mut ndim as *mut i32 as *mut c_void,
            &mut dims as *mut Dims as *mut c_void,
            &mut results as *mut Results as *mut c_void,
            &mut slot_param as *mut u32 as *mut c_void,
            &mut count_param as *mut u32 as *mut c_void,
        ];
        let (function, blocks, entry) = match summary {
            Summary::Stats => {
                let work = (numel * kind.itemsize())
                    .div_ceil(8)
                    .div_ceil(u64::from(THREADS));
                (self.kernels.stats, self.blocks(work), Entry::Stats { slot })
            }
            // One thread a sample.
            Summary::Samples => (self.kernels.sample, 1, Entry::Samples { slot, count }),
        };
        unsafe { self.launch(function, blocks, params)? };
        self.entries.push(entry);
        Ok(Some(self.entries.len() - 1))
    }

    /// Launches `function` on the batch's stream.
    unsafe fn launch<const N: usize>(
        &mut self,
        function: sys::CUfunction,
        blocks: u32,
        params: [*mut c_void; N],
    ) -> Result<()> {
        self.dispatched = true;
        // SAFETY: the parameters point at locals of the caller.
        unsafe { launch_kernel(function, self.stream, blocks, params) }
    }

    /// Dispatches what is left and records the event the results wait for
    /// (a captured batch records none: its results are its slots).
    pub fn finish(mut self) -> Result<Finished> {
        self.dispatch()?;
        if self.graph.is_some() {
            self.finished = true;
            return Ok(Finished {
                ctx: self.kernels.ctx,
                event: std::ptr::null_mut(),
                host: std::ptr::null(),
                entries: std::mem::take(&mut self.entries),
                returned: Arc::clone(&self.returned),
                range: 0,
            });
        }
        let _timed = timed(Phase::HashEvent);
        let event = self.returned.event()?;
        unsafe { result::event::record(event, self.stream as sys::CUstream)? };
        self.finished = true;
        Ok(Finished {
            ctx: self.kernels.ctx,
            event,
            host: self.host,
            entries: std::mem::take(&mut self.entries),
            returned: Arc::clone(&self.returned),
            range: self.range,
        })
    }
}

impl Drop for Batch {
    /// A batch that never finished (its launch failed) gives its range
    /// back if no kernel of it was enqueued; one that was may still write
    /// into the range, which is then never reused.
    fn drop(&mut self) {
        if !self.finished && !self.dispatched && self.graph.is_none() {
            self.returned.release_range(self.range);
        }
    }
}

/// Hash table launches enqueued by this process (for benchmarks and tests).
pub static TABLE_LAUNCHES: AtomicU64 = AtomicU64::new(0);
/// Of those, the ones enqueued beside a CUDA graph's launches
/// ([`Carried::enqueue_beside`]).
pub static TABLE_LAUNCHES_BESIDE: AtomicU64 = AtomicU64::new(0);

/// Launches `tthash_table` on `stream` for `items` (slots counted from
/// `ring`), [`TABLE_ITEMS`] at a time; returns how many launches that took.
///
/// # Safety
/// Every item must have been made by [`Batch::hash`] on this device.
unsafe fn enqueue_table(
    kernels: &Kernels,
    stream: u64,
    ring: Results,
    items: &[Item],
) -> Result<u32> {
    let mut launched = 0;
    for chunk in items.chunks(TABLE_ITEMS) {
        TABLE_LAUNCHES.fetch_add(1, Ordering::Relaxed);
        let mut table = Table {
            results: ring,
            count: chunk.len() as u32,
            items: [chunk[0]; TABLE_ITEMS],
        };
        let wants: SmallVec<[Want; TABLE_ITEMS]> = chunk.iter().map(Item::want).collect();
        let mut first = 0u32;
        for (i, (item, blocks)) in chunk
            .iter()
            .zip(share_blocks(&wants, kernels.resident))
            .enumerate()
        {
            table.items[i] = Item {
                first_block: first,
                blocks,
                ..*item
            };
            first += blocks;
        }
        let params = [&mut table as *mut Table as *mut c_void];
        let _timed = timed(Phase::HashTable);
        // SAFETY: the table lives until the driver has copied it.
        unsafe { launch_kernel(kernels.table, stream, first, params)? };
        launched += 1;
    }
    Ok(launched)
}

/// Launches `function` on `stream` with `THREADS` threads per block.
///
/// # Safety
/// `params` must point at the kernel's parameters, alive for the call.
unsafe fn launch_kernel<const N: usize>(
    function: sys::CUfunction,
    stream: u64,
    blocks: u32,
    mut params: [*mut c_void; N],
) -> Result<()> {
    // SAFETY: the driver copies the parameters before this returns.
    unsafe {
        result::launch_kernel(
            function,
            (blocks, 1, 1),
            (THREADS, 1, 1),
            0,
            stream as sys::CUstream,
            &mut params,
        )?
    };
    Ok(())
}

/// Hashes handed over by several batches on one stream ([`Batch::hand_to`]),
/// enqueued together as few table launches: each hash's result still
/// lands in its own batch's range.
pub struct Gathered {
    kernels: Kernels,
    stream: u64,
    ring: Results,
    items: Vec<Item>,
}

// SAFETY: as for `Batch`: its handles are process-wide driver objects, and
// a shared `&Gathered` allows nothing but reading them.
unsafe impl Send for Gathered {}
unsafe impl Sync for Gathered {}

impl Gathered {
    /// Nothing gathered yet, for `batch`'s stream.
    pub fn for_stream_of(batch: &Batch) -> Gathered {
        Gathered {
            kernels: batch.kernels,
            stream: batch.stream,
            ring: batch.ring,
            items: Vec::new(),
        }
    }

    /// Hashes gathered and not enqueued yet.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether nothing waits to be enqueued.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Enqueues everything gathered, in launches of up to [`TABLE_ITEMS`].
    pub fn enqueue(&mut self) -> Result<()> {
        let items = std::mem::take(&mut self.items);
        if items.is_empty() {
            return Ok(());
        }
        make_current(self.kernels.ctx)?;
        // SAFETY: every item was made by `Batch::hash` on this device.
        unsafe { enqueue_table(&self.kernels, self.stream, self.ring, &items) }.map(drop)
    }
}

impl Finished {
    /// Waits for the device (on the caller's thread) and returns the
    /// results in the order they were enqueued.
    pub fn wait(mut self) -> Result<Vec<Delivered>> {
        if self.event.is_null() {
            // A captured batch: its hashes come with each replay.
            return Ok(self
                .entries
                .iter()
                .map(|entry| match *entry {
                    Entry::Hash { slot, .. }
                    | Entry::Stats { slot }
                    | Entry::Samples { slot, .. } => Delivered::Slot(slot as u64),
                })
                .collect());
        }
        let waited = self.synchronize();
        let ok = waited.is_ok();
        // SAFETY: every slot was seen written, or the event that follows
        // the kernels completed.
        let slot = |i: usize| unsafe { self.host.add(i).read_volatile() };
        let delivered = waited.map(|()| {
            self.entries
                .iter()
                .map(|entry| match *entry {
                    Entry::Hash { slot: i, len } => {
                        Delivered::Hash(fmix64(slot(i) ^ len.wrapping_mul(LEN_MUL)))
                    }
                    Entry::Stats { slot: i } => {
                        let slots: Vec<u64> = (i..i + STATS_SLOTS).map(slot).collect();
                        Delivered::Stats(crate::stats::from_device_slots(&slots))
                    }
                    Entry::Samples { slot: i, count } => Delivered::Samples(
                        (i..i + count)
                            .map(|i| f64::from(f32::from_bits(slot(i) as u32)))
                            .collect(),
                    ),
                })
                .collect()
        });
        self.release(ok);
        delivered
    }

    /// Waits until every result of the batch has arrived in host memory,
    /// polling it; the event is asked every [`ASK_DRIVER`] (for a device
    /// error, or a result that happens to equal [`UNWRITTEN`]). The waiting
    /// thread never sits in the driver, whose locks the recorded program's
    /// launches take too.
    fn synchronize(&self) -> Result<()> {
        unsafe { result::ctx::set_current(self.ctx)? };
        relax_capture_mode()?;
        let mut asked = std::time::Instant::now();
        loop {
            if self.arrived() {
                return Ok(());
            }
            if asked.elapsed() >= ASK_DRIVER {
                // SAFETY: an event of this batch, recorded in `finish`.
                match unsafe { sys::cuEventQuery(self.event) } {
                    sys::CUresult::CUDA_SUCCESS => return Ok(()),
                    sys::CUresult::CUDA_ERROR_NOT_READY => asked = std::time::Instant::now(),
                    error => return Err(result::DriverError(error).into()),
                }
            }
            std::thread::sleep(POLL);
        }
    }

    /// The slots of each result, in order.
    fn slots(&self) -> impl Iterator<Item = usize> + '_ {
        self.entries.iter().flat_map(|entry| match *entry {
            Entry::Hash { slot, .. } => slot..slot + 1,
            Entry::Stats { slot } => slot..slot + STATS_SLOTS,
            Entry::Samples { slot, count } => slot..slot + count,
        })
    }

    /// Whether every slot of the batch has been written.
    fn arrived(&self) -> bool {
        // SAFETY: slots of this batch's range of the mapped ring.
        self.slots()
            .all(|i| unsafe { self.host.add(i).read_volatile() } != UNWRITTEN)
    }

    /// Hands the range back, and the event to the pool when it is known
    /// good (after a device error it is destroyed).
    fn release(&mut self, event_ok: bool) {
        let event = std::mem::replace(&mut self.event, std::ptr::null_mut());
        if event.is_null() {
            return;
        }
        let pooled = event_ok
            && self
                .returned
                .events
                .lock()
                .map(|mut events| events.push(event as usize))
                .is_ok();
        if !pooled {
            let _ = unsafe { result::event::destroy(event) };
        }
        if !event_ok {
            // The device failed: its kernels' writes may yet land in the
            // range, which is therefore never reused.
            return;
        }
        for i in self.slots() {
            // SAFETY: slots of this batch's range, which its kernels are
            // done with (all its results arrived, or its event completed).
            unsafe { (self.host.add(i) as *mut u64).write_volatile(UNWRITTEN) };
        }
        self.returned.release_range(self.range);
    }
}

impl Drop for Finished {
    /// A batch dropped unread (its trace failed) still gives its range
    /// back, once its kernels are done with it, so later batches never
    /// wait for it.
    fn drop(&mut self) {
        if !self.event.is_null() {
            let ok = self.synchronize().is_ok();
            self.release(ok);
        }
    }
}

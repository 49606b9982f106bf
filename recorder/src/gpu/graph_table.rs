//! The hashes of a CUDA graph's launches, captured into the graph.
//!
//! While a graph is captured nothing runs: the hash kernels enqueued for
//! its launches become nodes of the graph, in stream order around the
//! launches they hash, and run at every replay. Their results go to a
//! [`GraphTable`]: device memory of its own, allocated before the capture
//! begins (never from torch's allocator or the graph's pool), one slot per
//! hash in the order the hashes were captured. The blocks of a hash add
//! their sums straight into its slot, with no counters and no last block
//! (about 1 us less per table launch on an H200); the graph's first node,
//! enqueued as its capture begins ([`GraphTable::clear`]), zeroes the
//! slots at every replay. After each replay one
//! asynchronous copy on the replay's stream brings the table to pinned
//! host memory ([`GraphTable::read_back`]); the writer thread waits for it
//! and finalises the sums ([`ReadBack::wait`]). Nothing here synchronizes,
//! allocates or queries an event while the graph is being captured.
//!
//! Hash kernels may also run beside the graph's launches: a table has a
//! stream of its own that joins the capture ([`GraphTable::fork`]: it waits
//! for what the capturing stream enqueued so far, and its kernels become a
//! branch of the graph), and the capturing stream waits for a fork's
//! kernels where its caller says ([`GraphTable::join`]), at the latest
//! before the capture ends.

use super::device::{Results, device};
use super::driver::{GpuError, Result, make_current, poisoned, relax_capture_mode};
use cudarc::driver::result;
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use tritontui_trace::hash::{LEN_MUL, fmix64};

/// Hashes one graph may hold; a capture with more leaves the rest
/// unhashed and says so ([`GraphTable::overflowed`]).
pub const GRAPH_SLOTS: usize = 1 << 16;
/// Read-backs of one graph on their way at once; a replay beyond that
/// waits (outside any capture) for the writer thread to take one.
const READ_BACKS: usize = 64;
/// The longest a replay waits for a read-back buffer.
const READ_BACK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
/// How long the writer thread sleeps between asking whether a copy is done.
const POLL: std::time::Duration = std::time::Duration::from_micros(100);
/// Forks of one graph whose ends are told apart ([`GraphTable::join`]
/// names a fork by its number, modulo this): more than a caller leaves
/// unjoined at once.
pub const FORKS: usize = 4;

/// One captured graph's result slots on its device, and the pinned buffers
/// its replays' results come back in. Its device memory is never freed:
/// the graph's hash kernels write into it at every replay, also after
/// recording stops.
pub struct GraphTable {
    ordinal: i32,
    ctx: sys::CUcontext,
    results: Results,
    /// The byte length of each slot's hash, in slot order (what finalising
    /// a sum needs); frozen when the capture ends.
    lens: Mutex<Vec<u64>>,
    frozen: OnceLock<Arc<[u64]>>,
    /// Whether a hash found no slot left.
    overflowed: std::sync::atomic::AtomicBool,
    /// Hash kernels enqueued into the graph: each runs at every replay.
    kernels: AtomicU32,
    /// The stream its captures begin on ([`GraphTable::clear`]).
    origin: AtomicU64,
    /// Where hash kernels run beside the graph's launches; None when the
    /// stream or its events could not be made.
    side: Option<Side>,
    buffers: Arc<Buffers>,
}

/// A stream of the table's own, with the events its forks begin and end
/// with. Never destroyed, like the table's memory: the graph refers to
/// them.
struct Side {
    stream: sys::CUstream,
    begun: sys::CUevent,
    ended: [sys::CUevent; FORKS],
}

impl Side {
    /// Made before the capture begins.
    fn new() -> Result<Side> {
        let event = || result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
        Ok(Side {
            stream: result::stream::create(result::stream::StreamKind::NonBlocking)?,
            begun: event()?,
            ended: [event()?, event()?, event()?, event()?],
        })
    }
}

// SAFETY: the handles are driver objects owned by this table; the device
// memory is written by the graph's kernels and read by copies on streams.
unsafe impl Send for GraphTable {}
unsafe impl Sync for GraphTable {}

/// Pinned host buffers for read-backs: free ones, and how many exist.
struct Buffers {
    free: Mutex<(Vec<usize>, usize)>,
    returned: Condvar,
}

impl GraphTable {
    /// Allocates a table on device `ordinal` (opening it for hashing):
    /// call it before the capture begins.
    pub fn new(ordinal: i32) -> Result<GraphTable> {
        let device = device(ordinal)?;
        let ctx = device.kernels.ctx;
        make_current(ctx)?;
        // SAFETY: a plain allocation owned by the table, zeroed by the
        // graph at every replay.
        let slots = unsafe { result::malloc_sync(GRAPH_SLOTS * 8)? };
        Ok(GraphTable {
            ordinal,
            ctx,
            // No accumulators or counters: the kernels add into the slots.
            results: Results {
                acc: 0,
                arrived: 0,
                host: slots,
            },
            lens: Mutex::new(Vec::new()),
            frozen: OnceLock::new(),
            overflowed: Default::default(),
            kernels: Default::default(),
            origin: Default::default(),
            side: Side::new().ok(),
            buffers: Arc::new(Buffers {
                free: Mutex::new((Vec::new(), 0)),
                returned: Condvar::new(),
            }),
        })
    }

    /// The device the table is on.
    pub fn ordinal(&self) -> i32 {
        self.ordinal
    }

    /// Where the captured hash kernels put their results.
    pub(super) fn results(&self) -> Results {
        self.results
    }

    /// Enqueues the zeroing of every slot on `stream`, whose capture has
    /// just begun: the graph's first node, before every node of the graph
    /// in its order (work on another stream joins the capture through an
    /// event recorded on this one after it), so that at every replay the
    /// hash kernels add into zeroed slots.
    pub fn clear(&self, stream: u64) -> Result<()> {
        self.origin.store(stream, Ordering::Relaxed);
        make_current(self.ctx)?;
        // SAFETY: the slots are the table's own, alive as long as the
        // graph (never freed).
        unsafe {
            result::memset_d8_async(
                self.results.host,
                0,
                GRAPH_SLOTS * 8,
                stream as sys::CUstream,
            )?
        };
        Ok(())
    }

    /// The next slot, for the hash of `len` bytes; None when the table is
    /// full or the capture ended.
    pub(super) fn take_slot(&self, len: u64) -> Option<usize> {
        if self.frozen.get().is_some() {
            return None;
        }
        let mut lens = self.lens.lock().ok()?;
        if lens.len() == GRAPH_SLOTS {
            self.overflowed.store(true, Ordering::Relaxed);
            return None;
        }
        lens.push(len);
        Some(lens.len() - 1)
    }

    /// The capture ended: no slot is taken from now on. Returns the number
    /// of slots the graph's hashes fill.
    pub fn freeze(&self) -> usize {
        let lens: Arc<[u64]> = self
            .lens
            .lock()
            .map(|lens| lens.as_slice().into())
            .unwrap_or_else(|_| Arc::from([]));
        self.frozen.get_or_init(|| lens).len()
    }

    /// Bytes the hash kernels of the capture read at each replay (after
    /// [`GraphTable::freeze`]).
    pub fn hashed_bytes(&self) -> u64 {
        self.frozen.get().map_or(0, |lens| lens.iter().sum())
    }

    /// The stream the capture began on, once it began.
    pub fn origin(&self) -> u64 {
        self.origin.load(Ordering::Relaxed)
    }

    /// Whether hash kernels can run beside the graph's launches.
    pub fn has_side(&self) -> bool {
        self.side.is_some()
    }

    /// Runs `enqueue` on the table's own stream, after everything the
    /// capture's stream ([`GraphTable::origin`]) enqueued so far, as fork
    /// `n`: its kernels become a branch of the graph that the capture's
    /// stream does not wait for until [`GraphTable::join`]. The outer error says no branch
    /// began (there is nothing to join); once one has, its end is marked
    /// whatever `enqueue` returns (the inner result), and it must be
    /// joined.
    pub(super) fn fork(
        &self,
        n: usize,
        enqueue: impl FnOnce(u64) -> Result<u32>,
    ) -> Result<Result<()>> {
        let side = self
            .side
            .as_ref()
            .ok_or_else(|| GpuError("the graph's table has no stream of its own".into()))?;
        // SAFETY: events and streams of this table, and a stream the
        // caller captures on; the branch joins that capture.
        unsafe {
            result::event::record(side.begun, self.origin() as sys::CUstream)?;
            result::stream::wait_event(
                side.stream,
                side.begun,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )?;
        }
        let enqueued = enqueue(side.stream as u64);
        // SAFETY: as above.
        let ended = unsafe { result::event::record(side.ended[n % FORKS], side.stream) };
        Ok(enqueued
            .map(|launched| self.add_kernels(launched))
            .and(ended.map_err(GpuError::from)))
    }

    /// The capture's stream waits for fork `n` and every fork before it
    /// (the forks run one after another on the table's stream).
    pub fn join(&self, n: usize) -> Result<()> {
        let Some(side) = &self.side else {
            return Ok(());
        };
        // SAFETY: an event of this table, recorded by a fork of the
        // capture its origin runs.
        unsafe {
            result::stream::wait_event(
                self.origin() as sys::CUstream,
                side.ended[n % FORKS],
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )?
        };
        Ok(())
    }

    /// `launched` more hash kernels joined the graph.
    pub(super) fn add_kernels(&self, launched: u32) {
        self.kernels.fetch_add(launched, Ordering::Relaxed);
    }

    /// The hash kernels the capture put into the graph.
    pub fn kernels(&self) -> u32 {
        self.kernels.load(Ordering::Relaxed)
    }

    /// Whether some hash of the capture found no slot (it is missing from
    /// every replay).
    pub fn overflowed(&self) -> bool {
        self.overflowed.load(Ordering::Relaxed)
    }

    /// After a replay enqueued on `stream` (a raw `cudaStream_t`):
    /// enqueues the copy of the table to the host behind it and returns
    /// what the writer thread waits for. Waits only when [`READ_BACKS`]
    /// copies of this graph are still on their way.
    pub fn read_back(&self, stream: u64) -> Result<ReadBack> {
        let lens = self
            .frozen
            .get()
            .cloned()
            .ok_or_else(|| GpuError("the graph's capture has not ended".into()))?;
        make_current(self.ctx)?;
        let bytes = lens.len().max(1) * 8;
        let buffer = self.buffer(bytes)?;
        let event = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)?;
        // SAFETY: `buffer` is pinned and holds `bytes`; the table holds at
        // least as many; both outlive the copy (the buffer is only reused
        // after the event completed).
        let copied = unsafe {
            sys::cuMemcpyDtoHAsync_v2(
                buffer as *mut c_void,
                self.results.host,
                bytes,
                stream as sys::CUstream,
            )
            .result()
            .and_then(|()| result::event::record(event, stream as sys::CUstream))
        };
        if let Err(e) = copied {
            let _ = unsafe { result::event::destroy(event) };
            self.buffers.give_back(buffer);
            return Err(e.into());
        }
        Ok(ReadBack {
            ctx: self.ctx,
            event,
            buffer,
            lens,
            buffers: Arc::clone(&self.buffers),
        })
    }

    /// A free pinned buffer of `bytes` (every buffer of a table has the
    /// same size, fixed when the capture ended).
    fn buffer(&self, bytes: usize) -> Result<usize> {
        let free = self.buffers.free.lock().map_err(poisoned)?;
        let (mut free, waited) = self
            .buffers
            .returned
            .wait_timeout_while(free, READ_BACK_WAIT, |(free, made)| {
                free.is_empty() && *made >= READ_BACKS
            })
            .map_err(poisoned)?;
        if waited.timed_out() {
            return Err(GpuError(
                "no read-back buffer came free (earlier replays' copies never completed)".into(),
            ));
        }
        if let Some(buffer) = free.0.pop() {
            return Ok(buffer);
        }
        // SAFETY: a pinned allocation, outside any capture.
        let buffer = unsafe { result::malloc_host(bytes, sys::CU_MEMHOSTALLOC_PORTABLE)? };
        free.1 += 1;
        Ok(buffer as usize)
    }
}

impl Buffers {
    fn give_back(&self, buffer: usize) {
        if let Ok(mut free) = self.free.lock() {
            free.0.push(buffer);
            self.returned.notify_all();
        }
    }
}

/// One replay's results on their way to the host.
pub struct ReadBack {
    ctx: sys::CUcontext,
    event: sys::CUevent,
    buffer: usize,
    lens: Arc<[u64]>,
    buffers: Arc<Buffers>,
}

// SAFETY: the event and the buffer belong to this read-back alone.
unsafe impl Send for ReadBack {}

impl ReadBack {
    /// Waits for the copy (on the caller's thread, asking the event) and
    /// returns the hash of every slot, in slot order.
    pub fn wait(self) -> Result<Vec<u64>> {
        unsafe { result::ctx::set_current(self.ctx)? };
        relax_capture_mode()?;
        loop {
            // SAFETY: an event recorded after the copy, outside a capture.
            match unsafe { sys::cuEventQuery(self.event) } {
                sys::CUresult::CUDA_SUCCESS => break,
                sys::CUresult::CUDA_ERROR_NOT_READY => std::thread::sleep(POLL),
                error => return Err(result::DriverError(error).into()),
            }
        }
        // SAFETY: the copy into the buffer completed.
        let raw = unsafe { std::slice::from_raw_parts(self.buffer as *const u64, self.lens.len()) };
        Ok(raw
            .iter()
            .zip(self.lens.iter())
            .map(|(&sum, &len)| fmix64(sum ^ len.wrapping_mul(LEN_MUL)))
            .collect())
    }
}

impl Drop for ReadBack {
    /// The buffer goes back once its copy is done (a device error keeps it
    /// out of use), and the event is destroyed.
    fn drop(&mut self) {
        let done = unsafe { sys::cuEventSynchronize(self.event) }
            .result()
            .is_ok();
        let _ = unsafe { result::event::destroy(self.event) };
        if done {
            self.buffers.give_back(self.buffer);
        }
    }
}

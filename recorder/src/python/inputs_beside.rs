//! The hashes of a graph call's inputs, run beside the call's launches on
//! the device's side stream (`crate::gpu::Beside`) instead of before them.
//!
//! A call's inputs are hashed on its entry, one table kernel per 16
//! inputs: a model's weights, read once more before its first kernel can
//! start. Inside a call whose every launch is recorded (the condition
//! under which hashes are inherited and deferred, `call_scope`), nothing
//! but recorded launches and the replays of CUDA graphs captured inside
//! such calls writes device memory, so the input hashes may run beside the
//! call's work as long as nothing writes the bytes they read. The calling
//! stream waits for them ([`InputsBeside::join`]):
//!
//! * before a launch that writes bytes they read (and the launch's own
//!   stream too, when it is another),
//! * before a CUDA graph's replay, unless the graph was captured inside
//!   such a call, writes none of those bytes and replays on the calling
//!   stream (a graph tree's replay of a model's forward, whose weights
//!   it only reads, runs beside them),
//! * when the call ends, a capture begins, or anything else is queued or
//!   flushed (`TraceState::release_deferred`).
//!
//! The inputs' tensors are kept alive until then: memory the program
//! frees meanwhile could otherwise be handed to an allocation on the
//! calling stream and written while the side stream still reads it.
//! Where the program must see an input die during the call they are
//! hashed on the calling stream instead: a CUDA graph tree, before each
//! replay, checks that the outputs of its earlier graphs which died
//! while the graph was captured (a backward's saved activations) are
//! dead again, and fails the program otherwise (the caller's `may_keep`
//! says so, `hooks/cuda_graphs.py`). Inputs that read fewer than
//! [`LEAST_BYTES`] are hashed on the calling stream, as before: a fork
//! and its join cost about what hashing them does. The hashes read the bytes the calling stream would have read, so
//! the trace is the one recorded without forks.

use super::describe::{Described, Views};
use crate::gpu::{Beside, GpuError};
use pyo3::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use tritontui_trace::Span;

/// The fewest bytes a call's inputs read for their hashes to run beside
/// the call: about two microseconds of reading on an H200.
const LEAST_BYTES: u64 = 8 << 20;

/// Graph calls whose input hashes ran beside the call (for benchmarks and
/// tests).
pub static INPUT_FORKS: AtomicU64 = AtomicU64::new(0);

/// Input hashes running beside a call, until the calling stream waits.
struct Forked {
    side: &'static Beside,
    reads: Reads,
    _tensors: Vec<Py<PyAny>>,
}

/// What forked hashes read, and from which stream: what decides when that
/// stream must wait for them.
struct Reads {
    /// The calling stream.
    origin: u64,
    /// The bytes the hashes read.
    spans: Vec<Span>,
}

impl Reads {
    /// Whether a CUDA graph's replay on `stream` may run beside the
    /// hashes: its writes (merged, `Span::merged`) are all known and
    /// share none of their bytes, and it replays on the calling stream.
    fn beside_replay(&self, writes: Option<&[Span]>, stream: u64) -> bool {
        writes.is_some_and(|writes| {
            stream == self.origin && !self.spans.iter().any(|r| Span::any_overlaps(writes, r))
        })
    }
}

/// The input hashes of the graph call in progress, when they run beside
/// it.
#[derive(Default)]
pub struct InputsBeside {
    forked: Option<Forked>,
}

impl InputsBeside {
    /// Before a graph call's inputs are queued, their hashes held in
    /// `described`'s batch (`Batch::hold`): when `alone` (the only call in
    /// progress, on this thread, with every launch recorded) and they read
    /// at least [`LEAST_BYTES`], moves them onto the side stream of their
    /// device, forked from the calling stream, unless `may_keep` (called
    /// with their device) says that their tensors may not be kept alive
    /// until the join. Returns whether it did: the caller then marks the
    /// fork's end ([`InputsBeside::end`]) once the batch is finished.
    pub fn fork(
        &mut self,
        py: Python<'_>,
        described: &mut Described,
        alone: bool,
        may_keep: Option<&Bound<'_, PyAny>>,
    ) -> Result<bool, GpuError> {
        let ordinal = described.device();
        let Some(batch) = described.batch_mut().filter(|_| alone) else {
            return Ok(false);
        };
        let origin = batch.stream();
        // A stream whose capture status is unknown is left as it is.
        if batch.waiting_bytes() < LEAST_BYTES
            || crate::gpu::stream_capturing(origin).unwrap_or(true)
            || !may_keep.is_none_or(|may| keeps(may, ordinal))
        {
            return Ok(false);
        }
        if self
            .forked
            .as_ref()
            .is_some_and(|forked| forked.reads.origin != origin)
        {
            self.join()?;
        }
        // Without a side stream the hashes run on the calling stream.
        let Ok(side) = Beside::of(ordinal) else {
            return Ok(false);
        };
        let stream = side.fork(origin)?;
        if !batch.move_to(stream) {
            return Ok(false);
        }
        INPUT_FORKS.fetch_add(1, Ordering::Relaxed);
        let reads = described.device_spans(Views::HashedBefore);
        let tensors = described.tensors_kept(py);
        match &mut self.forked {
            Some(forked) => {
                forked.reads.spans.extend(reads);
                forked._tensors.extend(tensors);
            }
            None => {
                self.forked = Some(Forked {
                    side,
                    reads: Reads {
                        origin,
                        spans: reads.collect(),
                    },
                    _tensors: tensors,
                })
            }
        }
        Ok(true)
    }

    /// Marks the end of the forked hashes, once their batch is finished.
    pub fn end(&self) -> Result<(), GpuError> {
        self.forked
            .as_ref()
            .map_or(Ok(()), |forked| forked.side.end())
    }

    /// Before a launch (its arguments in `described`, running on `stream`,
    /// asked only when needed): the calling stream, and the launch's,
    /// wait for the forked hashes when it writes bytes they read.
    pub fn before_launch(
        &mut self,
        described: &Described,
        stream: impl FnOnce() -> Option<u64>,
    ) -> Result<(), GpuError> {
        let Some(forked) = &self.forked else {
            return Ok(());
        };
        let written: Vec<Span> = described.device_spans(Views::Written).collect();
        if !Span::any_shared(&forked.reads.spans, &written) {
            return Ok(());
        }
        // A stream capturing a graph cannot wait for work outside it (its
        // capture would fail): the launch then races the hashes, which may
        // read its bytes; the program's own results cannot change.
        if let Some(stream) = stream().filter(|&s| {
            s != forked.reads.origin && !crate::gpu::stream_capturing(s).unwrap_or(true)
        }) {
            forked.side.join(stream)?;
        }
        self.join()
    }

    /// Before a CUDA graph replays on `stream`: the calling stream waits
    /// for the forked hashes unless `writes` (the bytes the graph writes,
    /// sorted and merged; None when they are not all known) shares none
    /// of their bytes and `stream` is the calling stream.
    pub fn before_replay(&mut self, writes: Option<&[Span]>, stream: u64) -> Result<(), GpuError> {
        match &self.forked {
            Some(forked) if !forked.reads.beside_replay(writes, stream) => self.join(),
            _ => Ok(()),
        }
    }

    /// The calling stream waits for the forked hashes; their tensors go.
    pub fn join(&mut self) -> Result<(), GpuError> {
        match self.forked.take() {
            Some(forked) => forked.side.join(forked.reads.origin),
            None => Ok(()),
        }
    }
}

/// Whether `may_keep` says a call's inputs on device `ordinal` may be
/// kept alive until its end (not when it fails to say).
fn keeps(may_keep: &Bound<'_, PyAny>, ordinal: i32) -> bool {
    may_keep
        .call1((ordinal,))
        .and_then(|answer| answer.is_truthy())
        .unwrap_or(false)
}

impl Drop for InputsBeside {
    /// A trace dropped with hashes forked (its recording failed): the
    /// calling stream still waits for them before their tensors go.
    fn drop(&mut self) {
        let _ = self.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hashes of two inputs, forked from stream 7.
    fn reads() -> Reads {
        Reads {
            origin: 7,
            spans: vec![Span::new(0, 0, 100), Span::new(0, 1000, 1100)],
        }
    }

    #[test]
    fn a_replay_runs_beside_the_input_hashes_only_when_its_writes_are_known_and_spare_them() {
        let reads = reads();
        let spares = Span::merged(vec![Span::new(0, 100, 1000), Span::new(0, 1100, 5000)]);
        let writes_one = Span::merged(vec![Span::new(0, 100, 1000), Span::new(0, 1050, 1060)]);
        assert!(reads.beside_replay(Some(&spares), 7));
        assert!(!reads.beside_replay(Some(&writes_one), 7));
        assert!(
            !reads.beside_replay(None, 7),
            "a graph whose writes are not all known"
        );
        assert!(
            !reads.beside_replay(Some(&spares), 8),
            "a replay on another stream"
        );
    }
}

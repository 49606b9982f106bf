//! The hashes of a graph call's inputs, run beside the call's launches on
//! the device's side stream (`Backend::Side`) instead of before them.
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

use super::{Backend, HashBatch, LaunchHashes, SideStream, Views};
use std::sync::atomic::{AtomicU64, Ordering};
use tritontui_trace::Span;

/// The fewest bytes a call's inputs read for their hashes to run beside
/// the call: about two microseconds of reading on an H200.
const LEAST_BYTES: u64 = 8 << 20;

/// Graph calls whose input hashes ran beside the call (for benchmarks and
/// tests).
pub static INPUT_FORKS: AtomicU64 = AtomicU64::new(0);

/// Input hashes running beside a call, until the calling stream waits.
struct Forked<B: Backend, K> {
    side: B::Side,
    reads: Reads,
    alive: Vec<K>,
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
pub struct InputsBeside<B: Backend, K> {
    forked: Option<Forked<B, K>>,
}

impl<B: Backend, K> Default for InputsBeside<B, K> {
    fn default() -> Self {
        InputsBeside { forked: None }
    }
}

impl<B: Backend, K> InputsBeside<B, K> {
    /// Before a graph call's inputs are queued, their hashes held in
    /// `launch`'s batch (`Batch::hold`): when `alone` (the only call in
    /// progress, on this thread, with every launch recorded) and they read
    /// at least [`LEAST_BYTES`], moves them onto the side stream of their
    /// device, forked from the calling stream, unless `may_keep` (called
    /// with their device) says that their tensors may not be kept alive
    /// until the join. Returns whether it did: the caller then marks the
    /// fork's end ([`InputsBeside::end`]) once the batch is finished.
    pub fn fork(
        &mut self,
        launch: &mut impl LaunchHashes<B, K>,
        alone: bool,
        may_keep: impl FnOnce(i32) -> bool,
    ) -> Result<bool, B::Error> {
        let ordinal = launch.device();
        let Some(batch) = launch.batch_mut().filter(|_| alone) else {
            return Ok(false);
        };
        let origin = batch.stream();
        // A stream whose capture status is unknown is left as it is.
        if batch.waiting_bytes() < LEAST_BYTES || B::capturing(origin) || !may_keep(ordinal) {
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
        let Some(side) = B::side_of(ordinal) else {
            return Ok(false);
        };
        let stream = side.fork(origin)?;
        if !batch.move_to(stream) {
            return Ok(false);
        }
        INPUT_FORKS.fetch_add(1, Ordering::Relaxed);
        let reads = launch.spans(Views::HashedBefore);
        let alive = launch.keep_alive();
        match &mut self.forked {
            Some(forked) => {
                forked.reads.spans.extend(reads);
                forked.alive.push(alive);
            }
            None => {
                self.forked = Some(Forked {
                    side,
                    reads: Reads {
                        origin,
                        spans: reads,
                    },
                    alive: vec![alive],
                })
            }
        }
        Ok(true)
    }

    /// Marks the end of the forked hashes, once their batch is finished.
    pub fn end(&self) -> Result<(), B::Error> {
        self.forked
            .as_ref()
            .map_or(Ok(()), |forked| forked.side.end())
    }

    /// Before a launch: the calling stream, and the launch's, wait for the
    /// forked hashes when it writes bytes they read.
    pub fn before_launch(&mut self, launch: &impl LaunchHashes<B, K>) -> Result<(), B::Error> {
        let Some(forked) = &self.forked else {
            return Ok(());
        };
        let written = launch.spans(Views::Written);
        if !Span::any_shared(&forked.reads.spans, &written) {
            return Ok(());
        }
        // A stream capturing a graph cannot wait for work outside it (its
        // capture would fail): the launch then races the hashes, which may
        // read its bytes; the program's own results cannot change.
        if let Some(stream) = launch
            .stream()
            .filter(|&s| s != forked.reads.origin && !B::capturing(s))
        {
            forked.side.join(stream)?;
        }
        self.join()
    }

    /// Before a CUDA graph replays on `stream`: the calling stream waits
    /// for the forked hashes unless `writes` (the bytes the graph writes,
    /// sorted and merged; None when they are not all known) shares none
    /// of their bytes and `stream` is the calling stream.
    pub fn before_replay(&mut self, writes: Option<&[Span]>, stream: u64) -> Result<(), B::Error> {
        match &self.forked {
            Some(forked) if !forked.reads.beside_replay(writes, stream) => self.join(),
            _ => Ok(()),
        }
    }

    /// The calling stream waits for the forked hashes; their tensors go.
    pub fn join(&mut self) -> Result<(), B::Error> {
        match self.forked.take() {
            Some(forked) => forked.side.join(forked.reads.origin),
            None => Ok(()),
        }
    }
}

impl<B: Backend, K> Drop for InputsBeside<B, K> {
    /// A trace dropped with hashes forked (its recording failed): the
    /// calling stream still waits for them before their tensors go.
    fn drop(&mut self) {
        let _ = self.join();
    }
}

#[cfg(test)]
mod tests {
    use super::super::simulated::{Event, SIDE, Sim, SimLaunch, SimTrace, Use, launched, take_log};
    use super::*;

    const MB: u64 = 1 << 20;

    /// A graph call's two inputs of 8 MiB on stream 7, queued as the trace
    /// file does (forked when `alone` and `may_keep`): the scheduler.
    fn call(alone: bool, may_keep: bool, bytes: u64) -> InputsBeside<Sim, u64> {
        take_log();
        let trace = SimTrace::new();
        let mut inputs = InputsBeside::default();
        let views = [(0, bytes, Use::Read), (16 * MB, 16 * MB + bytes, Use::Read)];
        let mut call = SimLaunch::inputs(1, 7, &views);
        let forked = inputs.fork(&mut call, alone, |_| may_keep).expect("fork");
        let record = trace.record(&call);
        trace.queue(record, &mut call);
        if forked {
            inputs.end().expect("end");
        }
        inputs
    }

    /// Runs a launch on `stream` writing `[start, end)`.
    fn launch(inputs: &mut InputsBeside<Sim, u64>, id: u64, stream: u64, start: u64, end: u64) {
        let launch = SimLaunch::before(id, stream, &[(start, end, Use::Write)]);
        inputs.before_launch(&launch).expect("before");
        launched(id);
    }

    #[test]
    fn input_hashes_run_beside_the_call_until_a_launch_writes_their_bytes() {
        let mut inputs = call(true, true, 8 * MB);
        launch(&mut inputs, 2, 7, 8 * MB, 16 * MB);
        launch(&mut inputs, 3, 8, 16 * MB, 16 * MB + 1);
        launch(&mut inputs, 4, 7, 0, 1);
        inputs.join().expect("join");
        assert_eq!(
            take_log(),
            vec![
                Event::SideFork(7),
                Event::Table {
                    stream: SIDE,
                    hashes: vec![100, 101]
                },
                Event::SideEnd,
                // Between the inputs: beside them.
                Event::Launch(2),
                // On another stream, over the second: both streams wait.
                Event::SideJoin(8),
                Event::SideJoin(7),
                Event::Launch(3),
                Event::Launch(4),
            ]
        );
    }

    #[test]
    fn input_hashes_stay_on_the_calling_stream_when_they_may_not_run_beside() {
        for (alone, may_keep, bytes) in [
            (false, true, 8 * MB),
            (true, false, 8 * MB),
            (true, true, MB),
        ] {
            let mut inputs = call(alone, may_keep, bytes);
            launch(&mut inputs, 2, 7, 0, 1);
            assert_eq!(
                take_log(),
                vec![
                    Event::Table {
                        stream: 7,
                        hashes: vec![100, 101]
                    },
                    Event::Launch(2),
                ],
                "alone {alone}, may keep {may_keep}, {bytes} bytes"
            );
        }
    }

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

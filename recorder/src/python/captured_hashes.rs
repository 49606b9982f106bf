//! The hashes of the launches a thread captures into a CUDA graph inside a
//! graph call whose every launch is recorded (`CallScope::captured_slots`),
//! run beside the graph's launches rather than between them.
//!
//! A captured launch's hashes after it wait for the next captured launch
//! ([`CapturedHashes::after_launch`]); there they join that launch's hashes
//! before it into one table kernel ([`CapturedHashes::before_launch`]).
//! When the launch writes none of the bytes that kernel reads, the kernel
//! forks from the capturing stream onto the graph table's own stream
//! (`GraphTable::fork`): at every replay it runs beside the launch. The
//! capturing stream waits for a fork before the launch after the one it
//! runs beside ([`BESIDE`]), before any launch that writes bytes a fork
//! reads, and before the capture ends ([`CapturedHashes::release`]).
//! Otherwise the kernel runs on the capturing stream before the launch, as
//! every hash of a capture outside such a call does.
//!
//! A fork's tensors are kept alive until the capturing stream has waited
//! for it: memory the program frees meanwhile could otherwise be handed to
//! an allocation inside an op (its result, a workspace) and written while
//! the fork still reads it. Writes to live memory are the launches'
//! arguments, which the check above sees (nothing but recorded launches
//! runs inside such a call). The hashes are those of the same bytes a
//! kernel on the capturing stream would read, so the trace is the one
//! recorded without forks.

use super::describe::{Described, Views};
use super::thread_state::thread_id;
use crate::gpu::{Batch, Carried, GpuError, GraphTable};
use pyo3::prelude::*;
use std::collections::VecDeque;
use std::sync::Arc;
use tritontui_trace::Span;

/// Launches a fork may run beside: the capturing stream waits for it
/// before the launch after those. More buy nothing on an H200 (a
/// transformer's graph replays in the same time with up to 7) and keep
/// tensors alive longer.
const BESIDE: usize = 1;
const _: () = assert!(BESIDE < crate::gpu::FORKS);

/// Hashes waiting for the next captured launch, with the bytes they read
/// and the tensors they read them from.
struct Waiting {
    hashes: Carried,
    reads: Vec<Span>,
    tensors: Vec<Py<PyAny>>,
}

/// A table kernel running beside the graph's launches, until the capturing
/// stream waits for it.
struct Fork {
    n: usize,
    table: Arc<GraphTable>,
    reads: Vec<Span>,
    _tensors: Vec<Py<PyAny>>,
}

/// The captured hashes of one trace, waiting or forked.
#[derive(Default)]
pub struct CapturedHashes {
    waiting: Option<Waiting>,
    forks: VecDeque<Fork>,
    /// Forks made so far (their numbers).
    made: usize,
    /// The thread whose capture they belong to.
    thread: u64,
}

impl CapturedHashes {
    /// After a captured launch, inside a call whose every launch is
    /// recorded: its hashes after it wait for the next captured launch.
    pub fn after_launch(&mut self, py: Python<'_>, described: &mut Described) {
        self.thread = thread_id();
        let Some(hashes) = described.batch_mut().and_then(Batch::carry) else {
            return;
        };
        self.waiting = Some(Waiting {
            hashes,
            reads: described.device_spans(Views::HashedAfter).collect(),
            tensors: described.tensors_kept(py),
        });
    }

    /// Before a launch (its hashes before it gathered in `described`): the
    /// waiting hashes join them, and the table kernel they make runs beside
    /// the launch when `beside` (it is captured inside a call whose every
    /// launch is recorded) and the launch writes none of its bytes.
    pub fn before_launch(
        &mut self,
        py: Python<'_>,
        described: &mut Described,
        beside: bool,
    ) -> Result<(), GpuError> {
        let pending = self.waiting.is_some() || !self.forks.is_empty();
        if !pending && !beside {
            // Most launches: outside any capture, or one outside such a
            // call (its hashes are dispatched with it, as ever).
            return Ok(());
        }
        if pending && self.thread != thread_id() {
            // Another thread's capture: its own next launch or the end of
            // its call or capture takes them.
            return Ok(());
        }
        self.thread = thread_id();
        let written: Vec<Span> = described.device_spans(Views::Written).collect();
        if !beside
            || self
                .forks
                .iter()
                .any(|fork| Span::any_shared(&fork.reads, &written))
        {
            self.join_all()?;
        }
        let (mut reads, mut tensors) = (Vec::new(), Vec::new());
        if let Some(waiting) = self.waiting.take() {
            match described.batch_mut() {
                Some(batch) => match batch.join(waiting.hashes) {
                    Ok(()) => (reads, tensors) = (waiting.reads, waiting.tensors),
                    Err(hashes) => hashes.enqueue()?,
                },
                None => waiting.hashes.enqueue()?,
            }
        }
        let Some(hashes) = described.batch_mut().and_then(Batch::carry) else {
            return Ok(());
        };
        reads.extend(described.device_spans(Views::HashedBefore));
        let table = Arc::clone(hashes.table());
        let alongside = beside
            && table.has_side()
            && hashes.stream() == table.origin()
            && !Span::any_shared(&reads, &written);
        if !alongside {
            return hashes.enqueue();
        }
        tensors.extend(described.tensors_kept(py));
        let n = self.made;
        self.made += 1;
        // A branch that began is joined, even when its kernels failed.
        let enqueued = hashes.enqueue_beside(n)?;
        self.forks.push_back(Fork {
            n,
            table,
            reads,
            _tensors: tensors,
        });
        while self.forks.len() > BESIDE {
            self.join_oldest()?;
        }
        enqueued
    }

    /// Something other than the next captured launch comes (the call or
    /// the capture ends, the trace is flushed): the waiting hashes are
    /// enqueued on their own, and the capturing stream waits for every
    /// fork.
    pub fn release(&mut self) -> Result<(), GpuError> {
        let enqueued = match self.waiting.take() {
            Some(waiting) => waiting.hashes.enqueue(),
            None => Ok(()),
        };
        self.join_all().and(enqueued)
    }

    /// The capturing stream waits for every fork (for the last, which
    /// ran after the others); their tensors go.
    fn join_all(&mut self) -> Result<(), GpuError> {
        let joined = self.forks.back().map_or(Ok(()), Fork::join);
        self.forks.clear();
        joined
    }

    /// The capturing stream waits for the oldest fork; its tensors go.
    fn join_oldest(&mut self) -> Result<(), GpuError> {
        self.forks.pop_front().map_or(Ok(()), |fork| fork.join())
    }
}

impl Fork {
    /// The capturing stream waits for this fork and every one before it.
    fn join(&self) -> Result<(), GpuError> {
        self.table.join(self.n)
    }
}

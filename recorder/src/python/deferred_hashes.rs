//! Device hashes deferred inside a graph call, so that a step needs fewer
//! hash launches (issue 17).
//!
//! Launch by launch, every recorded launch enqueues a table of hashes
//! before it (its inputs) and one after it (its outputs). Inside a graph
//! call whose every launch is recorded (the condition under which hashes
//! are inherited, `call_scope`), nothing but recorded launches writes
//! device memory, so a hash may wait as long as no launch writes the
//! bytes it reads: the hashes after a launch, and those before it of the
//! arguments it only reads, are gathered here across launches and
//! enqueued together as one table launch when
//!
//! * a launch about to run writes bytes a gathered hash reads (or has a
//!   hash before it of an argument it writes), or runs on another stream,
//! * a table is full ([`GATHER`]), or [`HOLD`] records wait,
//! * the graph call ends, or anything else is queued (a graph call's
//!   inputs, the results), or the trace is flushed or closed.
//!
//! A waiting hash's tensor is kept alive until its table is enqueued: what
//! the program frees meanwhile could otherwise be reused by work nothing
//! records (an autotuning benchmark's copies of a kernel's arguments, on
//! a graph's first call) and read after it.
//!
//! Each hash still lands in its own launch's range of result slots, and a
//! deferred launch's completion event is recorded after the table launch
//! that computes its hashes; its record waits here, with every record
//! queued after it, so the trace keeps its order. A hash computed later
//! reads the same bytes, so the trace is the one recorded launch by
//! launch (`TRITONTUI_DEFER_HASHES=0`), which the GPU tests compare.

use super::describe::{Described, Views};
use crate::background::{BackgroundWriter, Fill};
use crate::gpu::{Batch, Gathered};
use pyo3::prelude::*;
use std::io;
use tritontui_trace::Span;
use tritontui_trace::format::Record;

/// Hashes gathered past this many are enqueued: one full table launch.
const GATHER: usize = 16;
/// Records held behind deferred hashes past this many are let go, so that
/// the writer thread keeps up.
const HOLD: usize = 256;

/// A record waiting behind deferred hashes, with the batch its results
/// come from (None for a record with no device results) and the tensors
/// they read, kept alive until then.
struct Held {
    record: Record,
    fills: Vec<Fill>,
    batch: Option<Box<Batch>>,
    _tensors: Vec<Py<PyAny>>,
}

/// The hashes gathered so far and the records waiting for them.
#[derive(Default)]
pub struct DeferredHashes {
    gathered: Option<Gathered>,
    /// The bytes the gathered hashes read.
    reads: Vec<Span>,
    held: Vec<Held>,
}

impl DeferredHashes {
    /// Whether nothing is deferred.
    fn idle(&self) -> bool {
        self.held.is_empty() && self.gathered.as_ref().is_none_or(Gathered::is_empty)
    }

    /// Before a launch runs, its hashes before it gathered in `described`:
    /// enqueues them, or (when `deferring`) hands over those of arguments
    /// it only reads, enqueuing everything gathered first when the launch
    /// writes bytes a gathered hash reads.
    pub fn before_launch(
        &mut self,
        described: &mut Described,
        deferring: bool,
        writer: &BackgroundWriter,
    ) -> io::Result<()> {
        if !deferring || !self.hand_over(described) {
            let touches_device = || {
                described.has_device_work()
                    || described.device_spans(Views::Written).next().is_some()
            };
            if !self.idle() && touches_device() {
                self.enqueue_into(described, writer)?;
            }
            described.dispatch();
            return Ok(());
        }
        self.reads
            .extend(described.device_spans(Views::HashedBefore));
        let overwrites = described
            .device_spans(Views::Written)
            .any(|written| self.reads.iter().any(|read| read.overlaps(&written)));
        if overwrites || self.full() {
            self.enqueue_into(described, writer)?;
        }
        Ok(())
    }

    /// After a launch, its record made and its hashes after it gathered in
    /// `described`: holds the record (its hashes handed over when
    /// `deferring`, or waiting for those of earlier launches when it has
    /// none), or gives it back to be queued now, after everything deferred
    /// was.
    pub fn after_launch(
        &mut self,
        py: Python<'_>,
        record: Record,
        described: &mut Described,
        deferring: bool,
        writer: &BackgroundWriter,
    ) -> io::Result<Option<Record>> {
        if described.has_device_work() {
            if !(deferring && self.hand_over(described)) {
                self.enqueue_into(described, writer)?;
                return Ok(Some(record));
            }
            self.reads
                .extend(described.device_spans(Views::HashedAfter));
        } else if self.idle() {
            return Ok(Some(record));
        }
        self.held.push(Held {
            record,
            fills: std::mem::take(&mut described.fills),
            batch: described.take_batch(),
            _tensors: described.tensors_kept(py),
        });
        if self.full() {
            self.enqueue_into(described, writer)?;
        }
        Ok(None)
    }

    /// Hands the hashes `described`'s batch gathered to the table; false
    /// when it cannot (another stream, or the device failed).
    fn hand_over(&mut self, described: &mut Described) -> bool {
        let Some(batch) = described.batch_mut() else {
            return !described.has_device_work();
        };
        // Held batches have nothing left in an empty table: it may change
        // streams.
        let gathered = match &mut self.gathered {
            Some(gathered) if !gathered.is_empty() => gathered,
            empty => empty.insert(Gathered::for_stream_of(batch)),
        };
        batch.hand_to(gathered)
    }

    fn full(&self) -> bool {
        self.held.len() >= HOLD || self.gathered.as_ref().is_some_and(|g| g.len() >= GATHER)
    }

    /// [`DeferredHashes::enqueue`], a device failure marking `described`'s
    /// results untrusted too (its hashes may have been among those lost).
    fn enqueue_into(
        &mut self,
        described: &mut Described,
        writer: &BackgroundWriter,
    ) -> io::Result<()> {
        if let Some(error) = self.enqueue(writer)? {
            described.device_failed(error);
        }
        Ok(())
    }

    /// Enqueues everything gathered, then queues the held records in order
    /// (each deferred batch recording its event after the table launch).
    /// Returns the device's error, if any: the records it concerns are
    /// written without their device results.
    pub fn enqueue(&mut self, writer: &BackgroundWriter) -> io::Result<Option<String>> {
        let mut error = match self.gathered.as_mut().map(Gathered::enqueue) {
            Some(Err(e)) => Some(e.to_string()),
            _ => None,
        };
        self.reads.clear();
        for held in self.held.drain(..) {
            let finished = match held.batch {
                Some(batch) if error.is_none() => match batch.finish() {
                    Ok(finished) => Some(finished),
                    Err(e) => {
                        error = Some(e.to_string());
                        None
                    }
                },
                _ => None,
            };
            match finished {
                Some(finished) if !held.fills.is_empty() => writer.pending(
                    held.record,
                    held.fills,
                    Box::new(move || finished.wait().map_err(|e| e.to_string())),
                )?,
                _ => writer.record(held.record)?,
            }
        }
        Ok(error)
    }
}

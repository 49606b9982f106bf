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

use super::{Backend, GatheredHashes, HashBatch, LaunchHashes, Views};
use crate::background::{BackgroundWriter, Fill};
use std::io;
use tritontui_trace::Span;
use tritontui_trace::format::Record;

/// Hashes gathered past this many are enqueued: one full table launch.
const GATHER: usize = 16;
/// Records held behind deferred hashes past this many are let go, so that
/// the writer thread keeps up.
const HOLD: usize = 256;

/// A record waiting behind deferred hashes, with the batch its results
/// come from (None for a record with no device results) and the token
/// keeping the tensors they read alive until then.
struct Held<B: Backend, K> {
    record: Record,
    fills: Vec<Fill>,
    batch: Option<Box<B::Batch>>,
    _alive: K,
}

/// The hashes gathered so far and the records waiting for them.
pub struct DeferredHashes<B: Backend, K> {
    gathered: Option<B::Gathered>,
    /// The bytes the gathered hashes read.
    reads: Vec<Span>,
    held: Vec<Held<B, K>>,
}

impl<B: Backend, K> Default for DeferredHashes<B, K> {
    fn default() -> Self {
        DeferredHashes {
            gathered: None,
            reads: Vec::new(),
            held: Vec::new(),
        }
    }
}

impl<B: Backend, K> DeferredHashes<B, K> {
    /// Whether nothing is deferred.
    fn idle(&self) -> bool {
        self.held.is_empty() && self.gathered.as_ref().is_none_or(|g| g.is_empty())
    }

    /// Before a launch runs, its hashes before it gathered in `launch`:
    /// enqueues them, or (when `deferring`) hands over those of arguments
    /// it only reads, enqueuing everything gathered first when the launch
    /// writes bytes a gathered hash reads.
    pub fn before_launch(
        &mut self,
        launch: &mut impl LaunchHashes<B, K>,
        deferring: bool,
        writer: &BackgroundWriter,
    ) -> io::Result<()> {
        if !deferring || !self.hand_over(launch) {
            // What waits goes before a launch that touches the device.
            if !self.idle()
                && (launch.has_device_work() || !launch.spans(Views::Written).is_empty())
            {
                self.enqueue_into(launch, writer)?;
            }
            launch.dispatch();
            return Ok(());
        }
        self.reads.extend(launch.spans(Views::HashedBefore));
        let overwrites = launch
            .spans(Views::Written)
            .iter()
            .any(|written| self.reads.iter().any(|read| read.overlaps(written)));
        if overwrites || self.full() {
            self.enqueue_into(launch, writer)?;
        }
        Ok(())
    }

    /// After a launch, its record made and its hashes after it gathered in
    /// `launch`: holds the record (its hashes handed over when
    /// `deferring`, or waiting for those of earlier launches when it has
    /// none), or gives it back to be queued now, after everything deferred
    /// was.
    pub fn after_launch(
        &mut self,
        record: Record,
        launch: &mut impl LaunchHashes<B, K>,
        deferring: bool,
        writer: &BackgroundWriter,
    ) -> io::Result<Option<Record>> {
        if launch.has_device_work() {
            if !(deferring && self.hand_over(launch)) {
                self.enqueue_into(launch, writer)?;
                return Ok(Some(record));
            }
            self.reads.extend(launch.spans(Views::HashedAfter));
        } else if self.idle() {
            return Ok(Some(record));
        }
        self.held.push(Held {
            record,
            fills: launch.take_fills(),
            batch: launch.take_batch(),
            _alive: launch.keep_alive(),
        });
        if self.full() {
            self.enqueue_into(launch, writer)?;
        }
        Ok(None)
    }

    /// Hands the hashes `launch`'s batch gathered to the table; false
    /// when it cannot (another stream, or the device failed).
    fn hand_over(&mut self, launch: &mut impl LaunchHashes<B, K>) -> bool {
        let Some(batch) = launch.batch_mut() else {
            return !launch.has_device_work();
        };
        // Held batches have nothing left in an empty table: it may change
        // streams.
        let gathered = match &mut self.gathered {
            Some(gathered) if !gathered.is_empty() => gathered,
            empty => empty.insert(batch.gathered()),
        };
        batch.hand_to(gathered)
    }

    fn full(&self) -> bool {
        self.held.len() >= HOLD || self.gathered.as_ref().is_some_and(|g| g.len() >= GATHER)
    }

    /// [`DeferredHashes::enqueue`], a device failure marking `launch`'s
    /// results untrusted too (its hashes may have been among those lost).
    fn enqueue_into(
        &mut self,
        launch: &mut impl LaunchHashes<B, K>,
        writer: &BackgroundWriter,
    ) -> io::Result<()> {
        if let Some(error) = self.enqueue(writer)? {
            launch.device_failed(error);
        }
        Ok(())
    }

    /// Enqueues everything gathered, then queues the held records in order
    /// (each deferred batch recording its event after the table launch).
    /// Returns the device's error, if any: the records it concerns are
    /// written without their device results.
    pub fn enqueue(&mut self, writer: &BackgroundWriter) -> io::Result<Option<String>> {
        let mut error = match self.gathered.as_mut().map(|g| g.enqueue()) {
            Some(Err(e)) => Some(e.to_string()),
            _ => None,
        };
        self.reads.clear();
        for held in self.held.drain(..) {
            let pending = match held.batch {
                Some(batch) if error.is_none() => match batch.finish() {
                    Ok(pending) => Some(pending),
                    Err(e) => {
                        error = Some(e.to_string());
                        None
                    }
                },
                _ => None,
            };
            match pending {
                Some(pending) if !held.fills.is_empty() => {
                    writer.pending(held.record, held.fills, pending)?
                }
                _ => writer.record(held.record)?,
            }
        }
        Ok(error)
    }
}

#[cfg(test)]
mod tests {
    use super::super::simulated::{
        Event, ReadBack, Sim, SimLaunch, SimTrace, Use, hash_id, launched, take_log,
    };
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// A launch as the tests give it: id, stream, views (start, end, use).
    type Given = (u64, u64, Vec<(u64, u64, Use)>);

    /// Runs `launches` through the scheduler as the trace file does, then
    /// enqueues what is left: the device's log and the launches read back.
    fn run(launches: &[Given], deferring: bool) -> (Vec<Event>, Vec<ReadBack>) {
        take_log();
        let trace = SimTrace::new();
        let mut deferred = DeferredHashes::<Sim, u64>::default();
        for (id, stream, views) in launches {
            let mut launch = SimLaunch::before(*id, *stream, views);
            let writer = &trace.writer;
            deferred
                .before_launch(&mut launch, deferring, writer)
                .expect("before");
            launched(*id);
            launch.after();
            let record = trace.record(&launch);
            let record = deferred.after_launch(record, &mut launch, deferring, writer);
            if let Some(record) = record.expect("after") {
                trace.queue(record, &mut launch);
            }
        }
        deferred.enqueue(&trace.writer).expect("enqueue");
        (take_log(), trace.read_back())
    }

    /// Where in `log` each hash was computed and each launch ran.
    fn positions(log: &[Event]) -> (HashMap<u64, usize>, HashMap<u64, usize>) {
        let (mut hashes, mut launches) = (HashMap::new(), HashMap::new());
        for (at, event) in log.iter().enumerate() {
            match event {
                Event::Table { hashes: ids, .. } => {
                    for id in ids {
                        assert!(hashes.insert(*id, at).is_none(), "hash {id} computed twice");
                    }
                }
                Event::Launch(id) => {
                    launches.insert(*id, at);
                }
                other => panic!("no fork or join expected here: {other:?}"),
            }
        }
        (hashes, launches)
    }

    /// Every hash reads the bytes its moment saw: it is computed after the
    /// last launch writing them before that moment and before the next
    /// one; every launch's record comes back in order with its hashes.
    fn check(launches: &[Given], log: &[Event], read: &[ReadBack]) {
        let (hashes, ran) = positions(log);
        for (k, (id, _, views)) in launches.iter().enumerate() {
            for (v, &(start, end, used)) in views.iter().enumerate() {
                let span = Span::new(0, start, end);
                let writes = |j: usize| {
                    launches[j]
                        .2
                        .iter()
                        .any(|&(s, e, u)| u != Use::Read && Span::new(0, s, e).overlaps(&span))
                };
                for after in [false, true] {
                    if !after && used == Use::Write {
                        continue;
                    }
                    let at = hashes[&hash_id(*id, v, after)];
                    let earlier = if after { 0..k + 1 } else { 0..k };
                    if let Some(j) = earlier.rev().find(|&j| writes(j)) {
                        assert!(
                            at > ran[&launches[j].0],
                            "hash {v} of {id} before its writer"
                        );
                    }
                    let later = if after { k + 1.. } else { k.. };
                    if let Some(j) = later
                        .take_while(|&j| j < launches.len())
                        .find(|&j| writes(j))
                    {
                        assert!(at < ran[&launches[j].0], "hash {v} of {id} after a writer");
                    }
                }
            }
        }
        let seqs: Vec<u64> = read.iter().map(|(seq, _)| *seq).collect();
        let ids: Vec<u64> = launches.iter().map(|(id, _, _)| *id).collect();
        assert_eq!(seqs, ids, "records out of order");
        for ((id, _, views), (_, hashes)) in launches.iter().zip(read) {
            let expected: Vec<_> = views
                .iter()
                .enumerate()
                .map(|(v, &(_, _, u))| {
                    let before = (u != Use::Write).then(|| hash_id(*id, v, false));
                    (before, Some(hash_id(*id, v, true)))
                })
                .collect();
            assert_eq!(hashes, &expected, "launch {id}");
        }
    }

    #[test]
    fn hashes_wait_until_a_launch_writes_the_bytes_they_read() {
        let launches: Vec<Given> = vec![
            (1, 7, vec![(0, 100, Use::Read), (100, 200, Use::Write)]),
            (2, 7, vec![(100, 200, Use::Read), (200, 300, Use::Write)]),
            (3, 7, vec![(0, 100, Use::Write)]),
        ];
        let (log, read) = run(&launches, true);
        check(&launches, &log, &read);
        // One table for the first two launches, before the third writes
        // what the first read; one for the third's hash after it.
        let table = |hashes: Vec<u64>| Event::Table { stream: 7, hashes };
        assert_eq!(
            log,
            vec![
                Event::Launch(1),
                Event::Launch(2),
                table(vec![100, 150, 151, 200, 250, 251]),
                Event::Launch(3),
                table(vec![350]),
            ]
        );
    }

    #[test]
    fn launch_by_launch_each_table_runs_beside_its_launch() {
        let launches: Vec<Given> = vec![
            (1, 7, vec![(0, 100, Use::Read), (100, 200, Use::Write)]),
            (2, 7, vec![(100, 200, Use::ReadWrite)]),
        ];
        let (log, read) = run(&launches, false);
        check(&launches, &log, &read);
        let table = |hashes: Vec<u64>| Event::Table { stream: 7, hashes };
        assert_eq!(
            log,
            vec![
                table(vec![100]),
                Event::Launch(1),
                table(vec![150, 151]),
                table(vec![200]),
                Event::Launch(2),
                table(vec![250]),
            ]
        );
    }

    #[test]
    fn a_full_table_is_enqueued() {
        let launches: Vec<Given> = (1..=GATHER as u64)
            .map(|id| (id, 7, vec![(id * 1000, id * 1000 + 10, Use::Read)]))
            .collect();
        let (log, read) = run(&launches, true);
        check(&launches, &log, &read);
        let tables = log
            .iter()
            .filter(|e| matches!(e, Event::Table { .. }))
            .count();
        assert_eq!(tables, 2, "{log:?}");
    }

    fn given() -> impl Strategy<Value = Vec<Given>> {
        let view = (
            0u64..8,
            1u64..3,
            prop_oneof![Just(Use::Read), Just(Use::Write), Just(Use::ReadWrite)],
        )
            .prop_map(|(start, len, u)| (start * 16, (start + len) * 16, u));
        prop::collection::vec((1u64..3, prop::collection::vec(view, 1..4)), 1..40).prop_map(|ls| {
            ls.into_iter()
                .enumerate()
                .map(|(i, (stream, views))| (i as u64 + 1, stream, views))
                .collect()
        })
    }

    proptest! {
        #[test]
        fn every_hash_reads_what_its_moment_saw(launches in given(), deferring in any::<bool>()) {
            let (log, read) = run(&launches, deferring);
            check(&launches, &log, &read);
        }
    }
}

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

use super::{Backend, CarriedHashes, GraphHashTable, HashBatch, LaunchHashes, Views};
use std::collections::VecDeque;
use tritontui_trace::Span;

/// Launches a fork may run beside: the capturing stream waits for it
/// before the launch after those. More buy nothing on an H200 (a
/// transformer's graph replays in the same time with up to 7) and keep
/// tensors alive longer.
pub const BESIDE: usize = 1;

/// Hashes waiting for the next captured launch, with the bytes they read
/// and the tokens keeping alive the tensors they read them from.
struct Waiting<B: Backend, K> {
    hashes: B::Carried,
    reads: Vec<Span>,
    alive: Vec<K>,
}

/// A table kernel running beside the graph's launches, until the capturing
/// stream waits for it.
struct Fork<B: Backend, K> {
    n: usize,
    table: B::Table,
    reads: Vec<Span>,
    _alive: Vec<K>,
}

impl<B: Backend, K> Fork<B, K> {
    /// The capturing stream waits for this fork and every one before it.
    fn join(&self) -> Result<(), B::Error> {
        self.table.join(self.n)
    }
}

/// The captured hashes of one trace, waiting or forked.
pub struct CapturedHashes<B: Backend, K> {
    waiting: Option<Waiting<B, K>>,
    forks: VecDeque<Fork<B, K>>,
    /// Forks made so far (their numbers).
    made: usize,
    /// The thread whose capture they belong to.
    thread: u64,
}

impl<B: Backend, K> Default for CapturedHashes<B, K> {
    fn default() -> Self {
        CapturedHashes {
            waiting: None,
            forks: VecDeque::new(),
            made: 0,
            thread: 0,
        }
    }
}

impl<B: Backend, K> CapturedHashes<B, K> {
    /// After a launch captured on `thread`, inside a call whose every
    /// launch is recorded: its hashes after it wait for the next captured
    /// launch.
    pub fn after_launch(&mut self, launch: &mut impl LaunchHashes<B, K>, thread: u64) {
        self.thread = thread;
        let Some(hashes) = launch.batch_mut().and_then(HashBatch::carry) else {
            return;
        };
        self.waiting = Some(Waiting {
            hashes,
            reads: launch.spans(Views::HashedAfter),
            alive: vec![launch.keep_alive()],
        });
    }

    /// Before a launch on `thread` (its hashes before it gathered in
    /// `launch`): the waiting hashes join them, and the table kernel they
    /// make runs beside the launch when `beside` (it is captured inside a
    /// call whose every launch is recorded) and the launch writes none of
    /// its bytes.
    pub fn before_launch(
        &mut self,
        launch: &mut impl LaunchHashes<B, K>,
        beside: bool,
        thread: u64,
    ) -> Result<(), B::Error> {
        let pending = self.waiting.is_some() || !self.forks.is_empty();
        if !pending && !beside {
            // Most launches: outside any capture, or one outside such a
            // call (its hashes are dispatched with it, as ever).
            return Ok(());
        }
        if pending && self.thread != thread {
            // Another thread's capture: its own next launch or the end of
            // its call or capture takes them.
            return Ok(());
        }
        self.thread = thread;
        let written = launch.spans(Views::Written);
        if !beside
            || self
                .forks
                .iter()
                .any(|fork| Span::any_shared(&fork.reads, &written))
        {
            self.join_all()?;
        }
        let (mut reads, mut alive) = (Vec::new(), Vec::new());
        if let Some(waiting) = self.waiting.take() {
            match launch.batch_mut() {
                Some(batch) => match batch.join(waiting.hashes) {
                    Ok(()) => (reads, alive) = (waiting.reads, waiting.alive),
                    Err(hashes) => hashes.enqueue()?,
                },
                None => waiting.hashes.enqueue()?,
            }
        }
        let Some(hashes) = launch.batch_mut().and_then(HashBatch::carry) else {
            return Ok(());
        };
        reads.extend(launch.spans(Views::HashedBefore));
        let table = hashes.table();
        let alongside = beside
            && table.has_side()
            && hashes.stream() == table.origin()
            && !Span::any_shared(&reads, &written);
        if !alongside {
            return hashes.enqueue();
        }
        alive.push(launch.keep_alive());
        let n = self.made;
        self.made += 1;
        // A branch that began is joined, even when its kernels failed.
        let enqueued = hashes.enqueue_beside(n)?;
        self.forks.push_back(Fork {
            n,
            table,
            reads,
            _alive: alive,
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
    pub fn release(&mut self) -> Result<(), B::Error> {
        let enqueued = match self.waiting.take() {
            Some(waiting) => waiting.hashes.enqueue(),
            None => Ok(()),
        };
        self.join_all().and(enqueued)
    }

    /// The capturing stream waits for every fork (for the last, which
    /// ran after the others); their tensors go.
    fn join_all(&mut self) -> Result<(), B::Error> {
        let joined = self.forks.back().map_or(Ok(()), Fork::join);
        self.forks.clear();
        joined
    }

    /// The capturing stream waits for the oldest fork; its tensors go.
    fn join_oldest(&mut self) -> Result<(), B::Error> {
        self.forks.pop_front().map_or(Ok(()), |fork| fork.join())
    }
}

#[cfg(test)]
mod tests {
    use super::super::simulated::{
        Event, Sim, SimLaunch, SimTable, Use, hash_id, launched, take_log,
    };
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;
    use std::sync::Arc;

    /// A launch as the tests give it: id, views (start, end, use).
    type Given = (u64, Vec<(u64, u64, Use)>);

    /// Captures `launches` on stream 7 into one graph inside a call whose
    /// every launch is recorded, as the trace file does; the device's log.
    fn capture(launches: &[Given]) -> Vec<Event> {
        take_log();
        let table = Arc::new(SimTable {
            origin: 7,
            has_side: true,
        });
        let mut captured = CapturedHashes::<Sim, u64>::default();
        for (id, views) in launches {
            let mut launch = SimLaunch::captured(*id, 7, views, &table);
            captured
                .before_launch(&mut launch, true, 1)
                .expect("before");
            launch.dispatch();
            launched(*id);
            launch.after();
            captured.after_launch(&mut launch, 1);
            launch.dispatch();
        }
        captured.release().expect("release");
        take_log()
    }

    #[test]
    fn hashes_run_beside_the_next_launch_unless_it_writes_their_bytes() {
        let launches: Vec<Given> = vec![
            (1, vec![(0, 100, Use::Read), (100, 200, Use::Write)]),
            (2, vec![(100, 200, Use::Read), (200, 300, Use::Write)]),
            (3, vec![(0, 100, Use::Write)]),
        ];
        assert_eq!(
            capture(&launches),
            vec![
                Event::Fork {
                    n: 0,
                    hashes: vec![100]
                },
                Event::Launch(1),
                // The first launch's hashes after it, with the second's
                // before it, beside the second.
                Event::Fork {
                    n: 1,
                    hashes: vec![150, 151, 200]
                },
                Event::JoinFork(0),
                Event::Launch(2),
                // The third writes what fork 1 reads: it waits for it.
                Event::JoinFork(1),
                Event::Fork {
                    n: 2,
                    hashes: vec![250, 251]
                },
                Event::Launch(3),
                Event::Table {
                    stream: 7,
                    hashes: vec![350]
                },
                Event::JoinFork(2),
            ]
        );
    }

    /// Where each hash runs in `log`: from its table or fork to the join
    /// of its fork (its table's own place for a table).
    fn intervals(log: &[Event]) -> HashMap<u64, (usize, usize)> {
        let mut runs = HashMap::new();
        for (at, event) in log.iter().enumerate() {
            let (ids, until) = match event {
                Event::Table { hashes, .. } => (hashes, at),
                Event::Fork { n, hashes } => {
                    let joined = log[at..]
                        .iter()
                        .position(|e| matches!(e, Event::JoinFork(m) if m >= n));
                    (hashes, at + joined.expect("every fork is joined"))
                }
                _ => continue,
            };
            for id in ids {
                assert!(runs.insert(*id, (at, until)).is_none(), "hash {id} twice");
            }
        }
        runs
    }

    fn given() -> impl Strategy<Value = Vec<Given>> {
        let used = prop_oneof![Just(Use::Read), Just(Use::Write), Just(Use::ReadWrite)];
        let view = (0u64..8, 1u64..3, used).prop_map(|(at, len, u)| (at * 16, (at + len) * 16, u));
        prop::collection::vec(prop::collection::vec(view, 1..4), 1..30)
            .prop_map(|launches| (1u64..).zip(launches).collect())
    }

    proptest! {
        /// Every hash, in a table or beside the graph's launches, runs
        /// while the bytes it reads hold what its moment saw: after the
        /// last launch writing them before that moment, and done before
        /// the next one runs.
        #[test]
        fn every_captured_hash_reads_what_its_moment_saw(launches in given()) {
            let log = capture(&launches);
            let runs = intervals(&log);
            let ran: HashMap<u64, usize> = log
                .iter()
                .enumerate()
                .filter_map(|(at, e)| match e { Event::Launch(id) => Some((*id, at)), _ => None })
                .collect();
            for (k, (id, views)) in launches.iter().enumerate() {
                for (v, &(start, end, used)) in views.iter().enumerate() {
                    let span = Span::new(0, start, end);
                    let writes = |j: usize| {
                        launches[j].1.iter().any(|&(s, e, u)| {
                            u != Use::Read && Span::new(0, s, e).overlaps(&span)
                        })
                    };
                    for after in [false, true] {
                        if !after && used == Use::Write {
                            continue;
                        }
                        let (from, until) = runs[&hash_id(*id, v, after)];
                        let earlier = if after { 0..k + 1 } else { 0..k };
                        if let Some(j) = earlier.rev().find(|&j| writes(j)) {
                            prop_assert!(from > ran[&launches[j].0]);
                        }
                        let next = (if after { k + 1 } else { k }..launches.len()).find(|&j| writes(j));
                        if let Some(j) = next {
                            prop_assert!(until < ran[&launches[j].0], "hash {} of {}", v, id);
                        }
                    }
                }
            }
        }
    }
}

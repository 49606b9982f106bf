//! CUDA graphs captured and replayed while recording. A capture under way
//! on this thread makes the launches it sees captured ones: written once,
//! with a graph id and their place in the graph, their device hashes
//! enqueued into the graph (on the capturing stream) and written to the
//! graph's table at every replay. Each replay then writes one `replay`
//! record whose hashes the writer thread reads back from the table.

use std::cell::RefCell;
use std::collections::HashMap;
#[cfg(feature = "cuda")]
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(feature = "cuda")]
use tritontui_trace::Span;
use tritontui_trace::format::{Captured, CudaGraphRecord, ReplayRecord};

/// The capture under way on this thread.
#[derive(Clone)]
pub struct Capturing {
    /// The trace it is recorded into ([`CudaGraphs::trace`]): a capture a
    /// stopped recording left under way is not another trace's.
    trace: u64,
    /// The graph's id in the trace.
    pub graph: u64,
    /// Where its hashes go, when the device can hash.
    #[cfg(feature = "cuda")]
    pub table: Option<Arc<crate::gpu::GraphTable>>,
    device: i32,
    stream: u64,
    launches: u32,
}

thread_local! {
    static CAPTURING: RefCell<Option<Capturing>> = const { RefCell::new(None) };
}

/// What a trace keeps of the graphs captured into it.
pub struct CudaGraphs {
    /// Which trace this is, among those of the process.
    trace: u64,
    /// Ids given so far.
    last_id: u64,
    graphs: HashMap<u64, Graph>,
    /// The bytes the launches of each capture under way write, while all
    /// of them are known ([`CudaGraphs::captured_writes`]).
    #[cfg(feature = "cuda")]
    writing: HashMap<u64, Option<Vec<Span>>>,
}

impl Default for CudaGraphs {
    fn default() -> CudaGraphs {
        static TRACES: AtomicU64 = AtomicU64::new(0);
        CudaGraphs {
            trace: TRACES.fetch_add(1, Ordering::Relaxed),
            last_id: 0,
            graphs: HashMap::new(),
            #[cfg(feature = "cuda")]
            writing: HashMap::new(),
        }
    }
}

/// One captured graph, as its replays need it.
struct Graph {
    #[cfg(feature = "cuda")]
    table: Option<Arc<crate::gpu::GraphTable>>,
    launches: u32,
    replays: u64,
    /// The bytes its launches write at a replay, merged
    /// ([`Span::merged`]); None when not all of them are known.
    #[cfg(feature = "cuda")]
    writes: Option<Vec<Span>>,
}

/// A replay's record and, when its hashes come back from the device, what
/// the writer thread waits for.
pub struct Replay {
    pub record: ReplayRecord,
    pub pending: Option<crate::background::Pending>,
    /// Why the replay's hashes will not come back, when they will not.
    pub error: Option<String>,
}

impl CudaGraphs {
    /// The capture of this trace under way on this thread, if any.
    pub fn capturing(&self) -> Option<Capturing> {
        CAPTURING
            .with_borrow(Clone::clone)
            .filter(|capturing| capturing.trace == self.trace)
    }

    /// The place of the next launch of this thread's capture (which
    /// counts it).
    pub fn next_place(&self) -> Option<Captured> {
        CAPTURING.with_borrow_mut(|capturing| {
            let capturing = capturing.as_mut().filter(|c| c.trace == self.trace)?;
            let place = Captured {
                graph: capturing.graph,
                index: capturing.launches,
            };
            capturing.launches += 1;
            Some(place)
        })
    }

    /// A capture begins on this thread on `device` and `stream`, before
    /// the driver's capture does: the graph's table is allocated now (when
    /// `device_hashing`). Returns the graph's id and, when the table could
    /// not be made, why.
    pub fn begin(
        &mut self,
        device: i32,
        stream: u64,
        device_hashing: bool,
    ) -> (u64, Option<String>) {
        self.last_id += 1;
        let graph = self.last_id;
        #[cfg(feature = "cuda")]
        let (table, error) = match device_hashing.then(|| crate::gpu::GraphTable::new(device)) {
            Some(Ok(table)) => (Some(Arc::new(table)), None),
            Some(Err(e)) => (None, Some(e.to_string())),
            None => (None, None),
        };
        #[cfg(not(feature = "cuda"))]
        let error = device_hashing.then(|| "built without CUDA support".to_owned());
        #[cfg(feature = "cuda")]
        self.writing.insert(graph, Some(Vec::new()));
        CAPTURING.set(Some(Capturing {
            trace: self.trace,
            graph,
            #[cfg(feature = "cuda")]
            table,
            device,
            stream,
            launches: 0,
        }));
        (graph, error)
    }

    /// The driver's capture of this thread began: the graph's first node
    /// zeroes its table ([`crate::gpu::GraphTable::clear`]). When it cannot
    /// be enqueued, the capture hashes nothing and this says why.
    pub fn began(&self) -> Option<String> {
        #[cfg(feature = "cuda")]
        return CAPTURING.with_borrow_mut(|capturing| {
            let capturing = capturing.as_mut().filter(|c| c.trace == self.trace)?;
            let error = capturing.table.as_ref()?.clear(capturing.stream).err()?;
            capturing.table = None;
            Some(format!(
                "its hash table could not be cleared at each replay ({error})"
            ))
        });
        #[cfg(not(feature = "cuda"))]
        None
    }

    /// This thread's capture ended: the graph's record (None when no
    /// capture was under way). `missing` says why its hashes are missing
    /// when the table could not be made; `pool` is the memory pool it
    /// allocated from, when known.
    pub fn end(
        &mut self,
        ts: u64,
        missing: Option<String>,
        pool: Option<[u64; 2]>,
    ) -> Option<CudaGraphRecord> {
        self.capturing()?;
        let capturing = CAPTURING.take()?;
        #[cfg(feature = "cuda")]
        let (slots, overflowed, bytes, hash_kernels) = match &capturing.table {
            Some(table) => (
                table.freeze(),
                table.overflowed(),
                table.hashed_bytes(),
                table.kernels(),
            ),
            None => (0, false, 0, 0),
        };
        #[cfg(not(feature = "cuda"))]
        let (slots, overflowed, bytes, hash_kernels) = (0, false, 0, 0);
        let missing = match missing {
            Some(why) => why,
            None if overflowed => format!("the graph holds more than {} hashes", slots),
            None => String::new(),
        };
        self.graphs.insert(
            capturing.graph,
            Graph {
                #[cfg(feature = "cuda")]
                table: capturing.table,
                launches: capturing.launches,
                replays: 0,
                #[cfg(feature = "cuda")]
                writes: self
                    .writing
                    .remove(&capturing.graph)
                    .flatten()
                    .map(Span::merged),
            },
        );
        Some(CudaGraphRecord {
            graph: capturing.graph,
            launches: capturing.launches,
            slots: slots as u32,
            device: capturing.device,
            stream: capturing.stream,
            missing,
            pool,
            bytes,
            hash_kernels,
            ts,
        })
    }

    /// A launch was captured into `graph`, writing `writes`: None when
    /// what it writes is not all known (it is captured outside a graph
    /// call whose every launch is recorded, where unrecorded work may be
    /// captured too).
    #[cfg(feature = "cuda")]
    pub fn captured_writes(&mut self, graph: u64, writes: Option<impl Iterator<Item = Span>>) {
        let Some(known) = self.writing.get_mut(&graph) else {
            return;
        };
        match (known.as_mut(), writes) {
            (Some(known), Some(writes)) => known.extend(writes),
            _ => *known = None,
        }
    }

    /// The bytes `graph`'s launches write at a replay, merged
    /// ([`Span::merged`]); None for a graph whose writes are not all
    /// known, or that this trace did not see captured.
    #[cfg(feature = "cuda")]
    pub fn writes(&self, graph: u64) -> Option<&[Span]> {
        self.graphs.get(&graph)?.writes.as_deref()
    }

    /// The launches of `graph`, for the replay about to be recorded; None
    /// for a graph this trace did not see captured.
    pub fn launches(&self, graph: u64) -> Option<u32> {
        self.graphs.get(&graph).map(|g| g.launches)
    }

    /// `graph` was replayed on `stream`: its launches take the sequence
    /// numbers from `first`. Enqueues the read-back of its table behind
    /// the replay.
    pub fn replayed(
        &mut self,
        graph: u64,
        stream: u64,
        first: u64,
        thread: u64,
        ts: u64,
    ) -> Option<Replay> {
        let entry = self.graphs.get_mut(&graph)?;
        let n = entry.replays;
        entry.replays += 1;
        let record = ReplayRecord {
            graph,
            n,
            first,
            stream,
            thread,
            hashes: Vec::new(),
            ts,
        };
        #[cfg(feature = "cuda")]
        if let Some(table) = &entry.table {
            return Some(match table.read_back(stream) {
                Ok(read_back) => Replay {
                    record,
                    pending: Some(Box::new(move || {
                        read_back
                            .wait()
                            .map(|hashes| {
                                hashes
                                    .into_iter()
                                    .map(crate::background::Delivered::Hash)
                                    .collect()
                            })
                            .map_err(|e| e.to_string())
                    })),
                    error: None,
                },
                Err(e) => Replay {
                    record,
                    pending: None,
                    error: Some(e.to_string()),
                },
            });
        }
        Some(Replay {
            record,
            pending: None,
            error: None,
        })
    }
}

#[cfg(all(test, feature = "cuda"))]
mod tests {
    use super::*;

    #[test]
    fn a_graph_writes_what_its_captured_launches_write_while_all_are_known() {
        let mut graphs = CudaGraphs::default();
        // Captures that hash nothing: no device is needed.
        let (known, _) = graphs.begin(0, 7, false);
        graphs.captured_writes(
            known,
            Some([Span::new(0, 200, 300), Span::new(0, 0, 100)].into_iter()),
        );
        graphs.captured_writes(known, Some([Span::new(0, 100, 150)].into_iter()));
        graphs.end(1, None, None).expect("a capture was under way");
        assert_eq!(
            graphs.writes(known),
            Some(&[Span::new(0, 0, 150), Span::new(0, 200, 300)][..])
        );

        let (unknown, _) = graphs.begin(0, 7, false);
        graphs.captured_writes(unknown, Some([Span::new(0, 0, 100)].into_iter()));
        graphs.captured_writes(unknown, None::<std::iter::Empty<Span>>);
        graphs.captured_writes(unknown, Some([Span::new(0, 500, 600)].into_iter()));
        graphs.end(2, None, None).expect("a capture was under way");
        assert_eq!(
            graphs.writes(unknown),
            None,
            "a launch's writes were not known"
        );
        assert_eq!(graphs.writes(99), None, "a graph never captured");
    }
}

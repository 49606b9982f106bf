//! Finds which earlier launch produced the bytes an argument read: a shadow
//! map of the process's memory (host and devices) that records the last
//! writer of every byte range.

use std::collections::BTreeMap;
use tritontui_trace::{ArgIndex, ArgRef, Trace};

/// Who wrote the bytes an argument read before a launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writers {
    /// The last writer of any of them.
    pub last: Origin,
    /// The earlier writers whose bytes are still part of them, latest
    /// first, each once: a buffer reused for a larger tensor holds what its
    /// last writer wrote over part of it and what others wrote before.
    pub earlier: Vec<Origin>,
}

/// Where the bytes an argument read before a launch came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Written by this launch (index into `Trace::launches`) through this
    /// argument.
    Launch(u32, ArgIndex),
    /// A graph input (index into `Trace::inputs`) not overwritten since.
    GraphInput(u32),
    /// Memory this launch handed out through this argument without
    /// writing it (an allocation, whose kernel's metadata says `allocates`,
    /// or an output flagged allocated), not written since: uninitialized.
    Allocated(u32, ArgIndex),
    /// No recorded launch wrote any of these bytes and no graph input
    /// covers them: uninitialized memory, or a write outside the recorded
    /// region.
    Unrecorded,
    /// The argument is a scalar; it has no producer.
    Scalar,
}

#[derive(Debug, Clone, Copy)]
struct Segment {
    end: u64,
    time: u64,
    origin: Origin,
    /// Hash of what was written, when the writer hashed it.
    hash: Option<u64>,
    /// The view it was written through (index into `Trace::layouts`): a
    /// hash is evidence about another view of the same bytes only when
    /// both read them in the same order.
    layout: u32,
}

/// Non-overlapping byte ranges keyed by their start, each with its last
/// writer. Host and device memory share one address space: CUDA's unified
/// addressing gives a process's host allocations and every device's
/// allocations distinct addresses, and an op may read a host tensor and
/// write a device one (a copy to the GPU), so one map follows both.
#[derive(Default)]
struct WriteMap {
    segments: BTreeMap<u64, Segment>,
}

impl WriteMap {
    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        start: u64,
        end: u64,
        time: u64,
        origin: Origin,
        hash: Option<u64>,
        layout: u32,
    ) {
        if start >= end {
            return;
        }
        // A segment that starts before `start` and reaches into it.
        if let Some((&key, &seg)) = self.segments.range(..start).next_back()
            && seg.end > start
        {
            self.segments.insert(key, Segment { end: start, ..seg });
            if seg.end > end {
                self.segments.insert(end, seg);
            }
        }
        // Segments that start inside [start, end).
        while let Some((&key, &seg)) = self.segments.range(start..end).next() {
            self.segments.remove(&key);
            if seg.end > end {
                self.segments.insert(end, seg);
            }
        }
        let segment = Segment {
            end,
            time,
            origin,
            hash,
            layout,
        };
        self.segments.insert(start, segment);
    }

    /// The one write that last covered exactly `[start, end)`, if any.
    fn whole_write(&self, start: u64, end: u64) -> Option<&Segment> {
        self.segments.get(&start).filter(|seg| seg.end == end)
    }

    /// Whether recorded launches wrote every byte of `[start, end)` (none
    /// of it only allocated, none of it a graph input's).
    fn covered(&self, start: u64, end: u64) -> bool {
        let by_launch = |seg: &Segment| matches!(seg.origin, Origin::Launch(..));
        let mut reached = start;
        if let Some((_, seg)) = self.segments.range(..start).next_back()
            && seg.end > start
        {
            if !by_launch(seg) {
                return false;
            }
            reached = seg.end;
        }
        for (&at, seg) in self.segments.range(start..end) {
            if at > reached || !by_launch(seg) {
                return false;
            }
            reached = reached.max(seg.end);
        }
        reached >= end
    }

    /// The segments holding any byte of `[start, end)`.
    fn overlapping(&self, start: u64, end: u64) -> impl Iterator<Item = &Segment> {
        let before = self
            .segments
            .range(..start)
            .next_back()
            .filter(|(_, seg)| seg.end > start);
        let inside = self.segments.range(start..end.max(start + 1));
        before.into_iter().chain(inside).map(|(_, seg)| seg)
    }

    fn last_writer(&self, start: u64, end: u64) -> Option<Origin> {
        self.overlapping(start, end)
            .max_by_key(|seg| seg.time)
            .map(|seg| seg.origin)
    }

    /// Every writer whose bytes are part of `[start, end)`, latest first;
    /// `None` when none is.
    fn writers(&self, start: u64, end: u64) -> Option<Writers> {
        let mut segments: Vec<&Segment> = self.overlapping(start, end).collect();
        segments.sort_unstable_by_key(|seg| std::cmp::Reverse(seg.time));
        let mut origins = segments.into_iter().map(|seg| seg.origin);
        let last = origins.next()?;
        let mut earlier: Vec<Origin> = Vec::new();
        for origin in origins {
            if origin != last && !earlier.contains(&origin) {
                earlier.push(origin);
            }
        }
        Some(Writers { last, earlier })
    }
}

/// Launch arguments whose writes are still the last ones at the end of a
/// trace, over bytes of the program's results (every such write, when the
/// trace does not record its results): `(launch, arg)`, sorted.
#[derive(Debug, Default)]
pub struct Survivors(Vec<(u32, ArgIndex)>);

impl Survivors {
    /// Whether argument `arg` of launch `launch` wrote bytes that are part
    /// of the program's results.
    pub fn survives(&self, launch: u32, arg: ArgIndex) -> bool {
        self.0.binary_search(&(launch, arg)).is_ok()
    }

    /// Whether any argument of launch `launch` did.
    pub fn any_survives(&self, launch: u32) -> bool {
        let at = self.0.partition_point(|&(l, _)| l < launch);
        self.0.get(at).is_some_and(|&(l, _)| l == launch)
    }
}

/// What last wrote the bytes of one of the program's results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultWriter {
    /// The last writer of any of its bytes.
    pub origin: Origin,
    /// Whether the result holds what that writer wrote: `Some(true)` when
    /// it wrote exactly this view and hashed it as the result's hash,
    /// `Some(false)` when the hashes differ (something unrecorded changed
    /// the bytes since), `None` when nothing shows either.
    pub holds: Option<bool>,
}

/// The data flow of a whole trace, as far as the results need it.
#[derive(Debug, Default)]
pub struct Flow {
    /// The writes that are still the last ones over the results.
    pub survivors: Survivors,
    /// What last wrote each result (in `Trace::results` order).
    pub result_writers: Vec<ResultWriter>,
}

/// Answers "who wrote the bytes argument `arg` of launch `launch` read"
/// for each query, which writes reach the results and who last wrote each
/// result, in one forward pass over all of the trace's program launches.
pub fn trace_flow(trace: &Trace, queries: &[(u32, ArgIndex)]) -> (Vec<Writers>, Flow) {
    let (origins, map) = replay(trace, queries, u32::MAX);
    let flow = Flow {
        survivors: survivors(trace, &map),
        result_writers: result_writers(trace, &map),
    };
    (origins, flow)
}

/// What last wrote each of the trace's results, from the map at the end.
fn result_writers(trace: &Trace, map: &WriteMap) -> Vec<ResultWriter> {
    let results = trace.results.as_deref().unwrap_or_default();
    results
        .iter()
        .map(|t| {
            let end = trace.live_span(t).end;
            let holds = map.whole_write(t.ptr, end).and_then(|seg| {
                let (x, y) = (
                    &trace.layouts[seg.layout as usize],
                    &trace.layouts[t.layout as usize],
                );
                let same_view = x.dtype == y.dtype && x.shape == y.shape && x.stride == y.stride;
                match (seg.hash, t.hash) {
                    (Some(written), Some(result)) if same_view => Some(written == result),
                    _ => None,
                }
            });
            ResultWriter {
                origin: map.last_writer(t.ptr, end).unwrap_or(Origin::Unrecorded),
                holds,
            }
        })
        .collect()
}

/// Answers "who produced argument `arg` of launch `launch`" for each query,
/// in a forward pass that stops at the last launch asked about.
pub fn find_origins(trace: &Trace, queries: &[(u32, ArgIndex)]) -> Vec<Origin> {
    let last = queries.iter().map(|&(launch, _)| launch).max().unwrap_or(0);
    let (writers, _) = replay(trace, queries, last);
    writers.into_iter().map(|w| w.last).collect()
}

/// Replays the program launches up to launch `until` (included) over a
/// write map: the writers of each queried argument, and the map at the end.
fn replay(trace: &Trace, queries: &[(u32, ArgIndex)], until: u32) -> (Vec<Writers>, WriteMap) {
    let mut order: Vec<usize> = (0..queries.len()).collect();
    order.sort_by_key(|&q| queries[q]);
    let alone = |last: Origin| Writers {
        last,
        earlier: Vec::new(),
    };
    let mut answers = vec![alone(Origin::Unrecorded); queries.len()];
    let mut map = WriteMap::default();
    let mut pending = order.into_iter().peekable();
    let mut inputs = trace.inputs.iter().enumerate().peekable();
    let mut time = 0u64;
    let same_view = |x: u32, y: u32| {
        let (x, y) = (&trace.layouts[x as usize], &trace.layouts[y as usize]);
        x.dtype == y.dtype && x.shape == y.shape && x.stride == y.stride
    };
    for (index, launch) in trace.program_launches() {
        let index = index as u32;
        if index > until {
            break;
        }
        while let Some((i, input)) = inputs.next_if(|(_, input)| input.before <= launch.seq) {
            let end = input
                .ptr
                .saturating_add(trace.layouts[input.layout as usize].extent);
            // A graph input that holds exactly what a recorded launch wrote
            // there (a saved activation, say) came from that launch, and
            // one over memory just allocated is that uninitialized memory.
            // Bytes that recorded launches wrote all of (a weight they
            // initialised and then changed in place, say) came from them,
            // unless a hash shows that something outside changed them. A
            // hash read through another view of the bytes (a permuted saved
            // activation) shows nothing either way.
            let start = input.ptr;
            let allocated = matches!(map.last_writer(start, end), Some(Origin::Allocated(..)));
            let whole = map.whole_write(start, end);
            let comparable = whole.filter(|seg| {
                same_view(seg.layout, input.layout) && seg.hash.is_some() && input.hash.is_some()
            });
            let changed = comparable.is_some_and(|seg| seg.hash != input.hash);
            let holds = comparable.is_some_and(|seg| seg.hash == input.hash);
            let from_launches = map.covered(start, end) && !changed;
            if !allocated && !from_launches && !holds {
                time += 1;
                let origin = Origin::GraphInput(i as u32);
                map.write(start, end, time, origin, input.hash, input.layout);
            }
        }
        let args: Vec<ArgRef<'_>> = trace.args_of(launch).collect();
        while let Some(q) = pending.next_if(|&q| queries[q].0 == index) {
            let arg = queries[q].1;
            answers[q] = match args.get(usize::from(arg)) {
                Some(ArgRef::Tensor(t)) => {
                    let (start, end) = t.byte_range();
                    map.writers(start, end)
                        .unwrap_or_else(|| alone(Origin::Unrecorded))
                }
                _ => alone(Origin::Scalar),
            };
        }
        let kernel = trace.kernel_of(launch);
        let allocates = kernel.is_allocation();
        for (i, arg) in args.iter().enumerate() {
            if let ArgRef::Tensor(t) = arg
                && kernel.wrote(i, arg)
            {
                time += 1;
                let (start, end) = t.byte_range();
                let origin = if allocates || t.allocated {
                    Origin::Allocated(index, i as ArgIndex)
                } else {
                    Origin::Launch(index, i as ArgIndex)
                };
                map.write(start, end, time, origin, t.post, t.layout_index);
            }
        }
    }
    (answers, map)
}

/// The launch arguments whose bytes are still the last written at the end
/// and lie in the program's results.
fn survivors(trace: &Trace, map: &WriteMap) -> Survivors {
    // The results' bytes, as a map of their own (the origin is unused).
    let results = trace.results.as_ref().map(|live| {
        let mut bytes = WriteMap::default();
        for t in live {
            let end = trace.live_span(t).end;
            bytes.write(t.ptr, end, 0, Origin::Unrecorded, t.hash, t.layout);
        }
        bytes
    });
    let in_results = |start: u64, end: u64| {
        results
            .as_ref()
            .is_none_or(|bytes| bytes.last_writer(start, end).is_some())
    };
    let mut out: Vec<(u32, ArgIndex)> = map
        .segments
        .iter()
        .filter_map(|(&start, seg)| match seg.origin {
            Origin::Launch(l, arg) if in_results(start, seg.end) => Some((l, arg)),
            _ => None,
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    Survivors(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_overlapping_writer_wins() {
        let mut map = WriteMap::default();
        map.write(100, 200, 1, Origin::Launch(1, 0), Some(7), 0);
        map.write(150, 160, 2, Origin::Launch(2, 0), None, 0);
        map.write(1000, 1100, 3, Origin::Launch(3, 0), None, 0);
        assert_eq!(map.last_writer(100, 120), Some(Origin::Launch(1, 0)));
        assert_eq!(map.last_writer(140, 152), Some(Origin::Launch(2, 0)));
        assert_eq!(map.last_writer(170, 180), Some(Origin::Launch(1, 0)));
        assert_eq!(map.last_writer(990, 1050), Some(Origin::Launch(3, 0)));
        assert_eq!(map.last_writer(200, 300), None);
        assert!(
            map.whole_write(1000, 1100)
                .is_some_and(|s| s.hash.is_none())
        );
        map.write(90, 210, 4, Origin::Launch(4, 1), Some(9), 0);
        assert_eq!(map.last_writer(150, 151), Some(Origin::Launch(4, 1)));
        assert_eq!(map.segments.len(), 2);
        assert_eq!(map.whole_write(90, 210).map(|s| s.hash), Some(Some(9)));
        assert!(map.whole_write(90, 200).is_none(), "not the whole write");
    }

    #[test]
    fn a_span_names_every_writer_whose_bytes_it_still_holds() {
        let mut map = WriteMap::default();
        map.write(100, 356, 1, Origin::Launch(1, 0), Some(7), 0);
        map.write(100, 104, 2, Origin::Launch(2, 0), Some(8), 0);
        let writers = map.writers(100, 356).expect("written");
        assert_eq!(writers.last, Origin::Launch(2, 0));
        assert_eq!(writers.earlier, vec![Origin::Launch(1, 0)]);
        let only_last = map.writers(100, 104).expect("written");
        assert!(
            only_last.earlier.is_empty(),
            "the earlier bytes are not read"
        );
        map.write(104, 356, 3, Origin::Launch(3, 0), None, 0);
        assert!(map.writers(100, 356).expect("written").earlier == vec![Origin::Launch(2, 0)]);
        assert!(map.writers(400, 500).is_none());
    }

    #[test]
    fn coverage_needs_every_byte_written_by_launches() {
        let mut map = WriteMap::default();
        map.write(100, 200, 1, Origin::Launch(1, 0), Some(7), 0);
        map.write(150, 154, 2, Origin::Launch(2, 0), Some(8), 0);
        assert!(map.covered(100, 200));
        assert!(map.covered(120, 160), "from inside a segment");
        assert!(!map.covered(90, 200), "bytes before any write");
        assert!(!map.covered(100, 210), "bytes after");
        map.write(300, 400, 3, Origin::Launch(3, 0), None, 0);
        assert!(!map.covered(100, 400), "a gap");
        map.write(200, 300, 4, Origin::Allocated(4, 0), None, 0);
        assert!(!map.covered(100, 400), "allocated, never written");
        map.write(200, 300, 5, Origin::GraphInput(0), Some(1), 0);
        assert!(!map.covered(250, 260), "a graph input's bytes");
        map.write(500, 600, 6, Origin::Launch(6, 0), Some(5), 0);
        assert_eq!(map.whole_write(500, 600).map(|s| s.hash), Some(Some(5)));
        assert!(map.whole_write(500, 590).is_none(), "not the whole write");
    }
}

//! Finds which earlier launch produced the bytes an argument read: a shadow
//! map of device memory that records the last writer of every byte range.

use crate::compare::{ArgIndex, was_written};
use std::collections::BTreeMap;
use tritontui_recorder::{ArgRef, Trace};

/// Where the bytes an argument read before a launch came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Written by this launch (index into `Trace::launches`) through this
    /// argument.
    Launch(u32, ArgIndex),
    /// A graph input (index into `Trace::inputs`) not overwritten since.
    GraphInput(u32),
    /// Memory this allocation (a launch of a kernel whose metadata says
    /// `allocates`) handed out, not written since: uninitialized.
    Allocated(u32),
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
}

/// Non-overlapping byte ranges keyed by (device, start), each with its
/// last writer.
#[derive(Default)]
struct WriteMap {
    segments: BTreeMap<(i32, u64), Segment>,
}

impl WriteMap {
    fn write(
        &mut self,
        device: i32,
        start: u64,
        end: u64,
        time: u64,
        origin: Origin,
        hash: Option<u64>,
    ) {
        if start >= end {
            return;
        }
        // A segment that starts before `start` and reaches into it.
        if let Some((&key, &seg)) = self.segments.range(..(device, start)).next_back()
            && key.0 == device
            && seg.end > start
        {
            self.segments.insert(key, Segment { end: start, ..seg });
            if seg.end > end {
                self.segments.insert((device, end), seg);
            }
        }
        // Segments that start inside [start, end).
        while let Some((&key, &seg)) = self.segments.range((device, start)..(device, end)).next() {
            self.segments.remove(&key);
            if seg.end > end {
                self.segments.insert((device, end), seg);
            }
        }
        let segment = Segment {
            end,
            time,
            origin,
            hash,
        };
        self.segments.insert((device, start), segment);
    }

    /// Whether exactly `[start, end)` was last written, whole, with `hash`.
    fn holds(&self, device: i32, start: u64, end: u64, hash: Option<u64>) -> bool {
        hash.is_some()
            && self
                .segments
                .get(&(device, start))
                .is_some_and(|seg| seg.end == end && seg.hash == hash)
    }

    /// Whether recorded launches wrote every byte of `[start, end)` (none
    /// of it only allocated, none of it a graph input's).
    fn covered(&self, device: i32, start: u64, end: u64) -> bool {
        let by_launch = |seg: &Segment| matches!(seg.origin, Origin::Launch(..));
        let mut reached = start;
        if let Some((key, seg)) = self.segments.range(..(device, start)).next_back()
            && key.0 == device
            && seg.end > start
        {
            if !by_launch(seg) {
                return false;
            }
            reached = seg.end;
        }
        for (&(_, at), seg) in self.segments.range((device, start)..(device, end)) {
            if at > reached || !by_launch(seg) {
                return false;
            }
            reached = reached.max(seg.end);
        }
        reached >= end
    }

    /// Whether exactly `[start, end)` was last written, whole, with a known
    /// hash other than `hash`: something outside changed it since.
    fn changed_since(&self, device: i32, start: u64, end: u64, hash: Option<u64>) -> bool {
        hash.is_some()
            && self
                .segments
                .get(&(device, start))
                .is_some_and(|seg| seg.end == end && seg.hash.is_some() && seg.hash != hash)
    }

    fn last_writer(&self, device: i32, start: u64, end: u64) -> Option<Origin> {
        let before = self
            .segments
            .range(..(device, start))
            .next_back()
            .filter(|(key, seg)| key.0 == device && seg.end > start);
        let inside = self
            .segments
            .range((device, start)..(device, end.max(start + 1)));
        before
            .into_iter()
            .chain(inside)
            .max_by_key(|(_, seg)| seg.time)
            .map(|(_, seg)| seg.origin)
    }
}

/// Answers "who produced argument `arg` of launch `launch`" for each query,
/// in one forward pass over the trace's program launches.
pub fn find_origins(trace: &Trace, queries: &[(u32, ArgIndex)]) -> Vec<Origin> {
    let mut order: Vec<usize> = (0..queries.len()).collect();
    order.sort_by_key(|&q| queries[q]);
    let mut answers = vec![Origin::Unrecorded; queries.len()];
    let Some(&last) = order.last() else {
        return answers;
    };
    let last_launch = queries[last].0;
    let mut map = WriteMap::default();
    let mut pending = order.into_iter().peekable();
    let mut inputs = trace.inputs.iter().enumerate().peekable();
    let mut time = 0u64;
    for (index, launch) in trace.program_launches() {
        let index = index as u32;
        if index > last_launch {
            break;
        }
        while let Some((i, input)) = inputs.next_if(|(_, input)| input.before <= launch.seq) {
            let end = input
                .ptr
                .saturating_add(trace.layouts[input.layout as usize].span);
            // A graph input that holds exactly what a recorded launch wrote
            // there (a saved activation, say) came from that launch, and
            // one over memory just allocated is that uninitialized memory.
            // Bytes that recorded launches wrote all of (a weight they
            // initialised and then changed in place, say) came from them,
            // unless a hash shows that something outside changed them.
            let (device, start) = (input.device, input.ptr);
            let allocated = matches!(
                map.last_writer(device, start, end),
                Some(Origin::Allocated(_))
            );
            let from_launches = map.covered(device, start, end)
                && !map.changed_since(device, start, end, input.hash);
            if !allocated && !from_launches && !map.holds(device, start, end, input.hash) {
                time += 1;
                let origin = Origin::GraphInput(i as u32);
                map.write(device, start, end, time, origin, input.hash);
            }
        }
        let args: Vec<ArgRef<'_>> = trace.args_of(launch).collect();
        while let Some(q) = pending.next_if(|&q| queries[q].0 == index) {
            let arg = queries[q].1;
            answers[q] = match args.get(usize::from(arg)) {
                Some(ArgRef::Tensor(t)) => {
                    let (start, end) = t.byte_range();
                    map.last_writer(launch.device, start, end)
                        .unwrap_or(Origin::Unrecorded)
                }
                _ => Origin::Scalar,
            };
        }
        let kernel = trace.kernel_of(launch);
        let allocates = is_allocation(kernel);
        for (i, arg) in args.iter().enumerate() {
            if let ArgRef::Tensor(t) = arg
                && was_written(kernel, i, arg)
            {
                time += 1;
                let (start, end) = t.byte_range();
                map.write(
                    launch.device,
                    start,
                    end,
                    time,
                    if allocates {
                        Origin::Allocated(index)
                    } else {
                        Origin::Launch(index, i as ArgIndex)
                    },
                    t.post,
                );
            }
        }
    }
    answers
}

/// Whether a kernel only hands out memory (`meta.allocates`): its outputs
/// are uninitialized, not produced.
pub fn is_allocation(kernel: &tritontui_recorder::Kernel) -> bool {
    kernel.meta.get("allocates") == Some(&tritontui_recorder::Scalar::Bool(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_overlapping_writer_wins() {
        let mut map = WriteMap::default();
        map.write(0, 100, 200, 1, Origin::Launch(1, 0), Some(7));
        map.write(0, 150, 160, 2, Origin::Launch(2, 0), None);
        map.write(1, 100, 200, 3, Origin::Launch(3, 0), None);
        assert_eq!(map.last_writer(0, 100, 120), Some(Origin::Launch(1, 0)));
        assert_eq!(map.last_writer(0, 140, 152), Some(Origin::Launch(2, 0)));
        assert_eq!(map.last_writer(0, 170, 180), Some(Origin::Launch(1, 0)));
        assert_eq!(map.last_writer(1, 0, 150), Some(Origin::Launch(3, 0)));
        assert_eq!(map.last_writer(0, 200, 300), None);
        assert!(!map.holds(1, 100, 200, None), "no hash, no match");
        map.write(0, 90, 210, 4, Origin::Launch(4, 1), Some(9));
        assert_eq!(map.last_writer(0, 150, 151), Some(Origin::Launch(4, 1)));
        assert_eq!(map.segments.len(), 2);
        assert!(map.holds(0, 90, 210, Some(9)));
        assert!(!map.holds(0, 90, 210, Some(8)));
        assert!(!map.holds(0, 90, 200, Some(9)));
    }

    #[test]
    fn coverage_needs_every_byte_written_by_launches() {
        let mut map = WriteMap::default();
        map.write(0, 100, 200, 1, Origin::Launch(1, 0), Some(7));
        map.write(0, 150, 154, 2, Origin::Launch(2, 0), Some(8));
        assert!(map.covered(0, 100, 200));
        assert!(map.covered(0, 120, 160), "from inside a segment");
        assert!(!map.covered(0, 90, 200), "bytes before any write");
        assert!(!map.covered(0, 100, 210), "bytes after");
        assert!(!map.covered(1, 100, 200), "another device");
        map.write(0, 300, 400, 3, Origin::Launch(3, 0), None);
        assert!(!map.covered(0, 100, 400), "a gap");
        map.write(0, 200, 300, 4, Origin::Allocated(4), None);
        assert!(!map.covered(0, 100, 400), "allocated, never written");
        map.write(0, 200, 300, 5, Origin::GraphInput(0), Some(1));
        assert!(!map.covered(0, 250, 260), "a graph input's bytes");
        assert!(!map.changed_since(0, 300, 400, Some(1)), "no hash written");
        map.write(0, 500, 600, 6, Origin::Launch(6, 0), Some(5));
        assert!(map.changed_since(0, 500, 600, Some(6)));
        assert!(!map.changed_since(0, 500, 600, Some(5)));
        assert!(!map.changed_since(0, 500, 600, None));
        assert!(
            !map.changed_since(0, 500, 590, Some(6)),
            "not the whole write"
        );
    }
}

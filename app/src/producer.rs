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
}

/// Non-overlapping byte ranges keyed by (device, start), each with its
/// last writer.
#[derive(Default)]
struct WriteMap {
    segments: BTreeMap<(i32, u64), Segment>,
}

impl WriteMap {
    fn write(&mut self, device: i32, start: u64, end: u64, time: u64, origin: Origin) {
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
        self.segments
            .insert((device, start), Segment { end, time, origin });
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
            time += 1;
            let span = trace.layouts[input.layout as usize].span;
            map.write(
                input.device,
                input.ptr,
                input.ptr.saturating_add(span),
                time,
                Origin::GraphInput(i as u32),
            );
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
                    Origin::Launch(index, i as ArgIndex),
                );
            }
        }
    }
    answers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_overlapping_writer_wins() {
        let mut map = WriteMap::default();
        map.write(0, 100, 200, 1, Origin::Launch(1, 0));
        map.write(0, 150, 160, 2, Origin::Launch(2, 0));
        map.write(1, 100, 200, 3, Origin::Launch(3, 0));
        assert_eq!(map.last_writer(0, 100, 120), Some(Origin::Launch(1, 0)));
        assert_eq!(map.last_writer(0, 140, 152), Some(Origin::Launch(2, 0)));
        assert_eq!(map.last_writer(0, 170, 180), Some(Origin::Launch(1, 0)));
        assert_eq!(map.last_writer(1, 0, 150), Some(Origin::Launch(3, 0)));
        assert_eq!(map.last_writer(0, 200, 300), None);
        map.write(0, 90, 210, 4, Origin::Launch(4, 1));
        assert_eq!(map.last_writer(0, 150, 151), Some(Origin::Launch(4, 1)));
        assert_eq!(map.segments.len(), 2);
    }
}

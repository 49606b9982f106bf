//! The training steps a trace's launches ran in (1.22, `step` records),
//! and which launches are fingerprints (recorded with `fingerprint`, before
//! `from_step` where it is set) rather than launches recorded in full.

use crate::format::{RecordOptions, StepRecord};

/// A trace's steps: where each begins among its launches.
#[derive(Debug, Clone, Default)]
pub struct Steps {
    /// The `step` records, in file order.
    pub records: Vec<StepRecord>,
    /// For each record, the index of the first launch after it (the next
    /// step's first).
    starts: Vec<u32>,
    /// Launches before this index are fingerprints.
    fingerprinted: u32,
}

impl Steps {
    /// Step record `record` read when `launches` launches were loaded.
    pub(super) fn add(&mut self, record: StepRecord, launches: usize) {
        self.records.push(record);
        self.starts.push(index(launches));
    }

    /// Every record read, of a trace of `launches` launches recorded with
    /// `options`: where its fingerprints end.
    pub(super) fn finish(&mut self, options: &RecordOptions, launches: usize) {
        self.fingerprinted = match (options.fingerprint, options.from_step) {
            (false, _) => 0,
            (true, None) => index(launches),
            (true, Some(0)) => 0,
            (true, Some(from)) => self.first_launch_of(from).map_or(index(launches), index),
        };
    }

    /// Whether the trace says where its steps end.
    pub fn known(&self) -> bool {
        !self.records.is_empty()
    }

    /// The step launch `i` (an index into the launches) ran in, when the
    /// trace says: the launches before the first `step` record ran in the
    /// step it ends, those after a record in the step after it.
    pub fn of(&self, i: usize) -> Option<u64> {
        let first = self.records.first()?;
        let ended = self.starts.partition_point(|&start| start as usize <= i);
        Some(match ended {
            0 => first.step,
            k => self.records[k - 1].step + 1,
        })
    }

    /// The index of the first launch after step `step - 1` ended (step
    /// `step`'s first, if it made any), when that end was recorded; step 0
    /// begins at the first launch.
    pub fn first_launch_of(&self, step: u64) -> Option<usize> {
        if step == 0 {
            return Some(0);
        }
        self.records
            .iter()
            .position(|r| r.step + 1 == step)
            .map(|k| self.starts[k] as usize)
    }

    /// Whether launch `i` is a fingerprint (a graph call's outputs, a host
    /// read, a collective or a step's state recorded with `fingerprint`),
    /// not a launch recorded in full.
    pub fn is_fingerprint(&self, i: usize) -> bool {
        i < self.fingerprinted as usize
    }

    /// How many steps ended among the fingerprints (the last one's number
    /// plus one), when any did.
    pub fn fingerprinted_steps(&self) -> Option<u64> {
        self.records
            .iter()
            .zip(&self.starts)
            .filter(|&(_, &start)| start <= self.fingerprinted)
            .map(|(r, _)| r.step + 1)
            .max()
    }

    /// How many launches are fingerprints (they come first).
    pub fn fingerprints(&self) -> usize {
        self.fingerprinted as usize
    }
}

/// A launch index as the tables store it.
fn index(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(step: u64) -> StepRecord {
        StepRecord {
            step,
            after: None,
            by: "optimizer".into(),
            ts: 0,
        }
    }

    #[test]
    fn launches_take_the_step_after_the_last_end_before_them() {
        let mut steps = Steps::default();
        assert_eq!(steps.of(0), None);
        steps.add(ended(0), 3);
        steps.add(ended(1), 5);
        steps.finish(&RecordOptions::default(), 9);
        assert_eq!(
            (0..9).map(|i| steps.of(i)).collect::<Vec<_>>(),
            [0, 0, 0, 1, 1, 2, 2, 2, 2].map(Some)
        );
        assert_eq!(steps.first_launch_of(2), Some(5));
        assert_eq!(steps.first_launch_of(3), None);
        assert!(!steps.is_fingerprint(0));
    }

    #[test]
    fn fingerprints_end_where_the_first_step_recorded_in_full_begins() {
        let window = |from| RecordOptions {
            fingerprint: true,
            from_step: from,
            ..RecordOptions::default()
        };
        let mut steps = Steps::default();
        steps.add(ended(0), 2);
        steps.add(ended(1), 4);
        steps.finish(&window(Some(2)), 10);
        assert_eq!(steps.fingerprints(), 4);
        assert!(steps.is_fingerprint(3) && !steps.is_fingerprint(4));
        steps.finish(&window(None), 10);
        assert_eq!(steps.fingerprints(), 10);
        steps.finish(&window(Some(0)), 10);
        assert_eq!(steps.fingerprints(), 0);
        // A window that never began: every launch is a fingerprint.
        steps.finish(&window(Some(7)), 10);
        assert_eq!(steps.fingerprints(), 10);
    }
}

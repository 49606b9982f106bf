//! Aligns the launch sequences of two runs so that launches present in only
//! one of them do not shift every later pair.

use similar::{Algorithm, DiffOp};
use std::time::{Duration, Instant};

/// One row of the side-by-side view: indices into each trace's `launches`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    /// The same launch in both runs.
    Both(u32, u32),
    /// A launch only run A made.
    OnlyA(u32),
    /// A launch only run B made.
    OnlyB(u32),
}

impl Row {
    /// The launch index in run A, if any.
    pub fn a(self) -> Option<u32> {
        match self {
            Row::Both(a, _) | Row::OnlyA(a) => Some(a),
            Row::OnlyB(_) => None,
        }
    }

    /// The launch index in run B, if any.
    pub fn b(self) -> Option<u32> {
        match self {
            Row::Both(_, b) | Row::OnlyB(b) => Some(b),
            Row::OnlyA(_) => None,
        }
    }
}

/// The aligned rows of two runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alignment {
    /// Rows in execution order.
    pub rows: Vec<Row>,
    /// Number of `Row::Both` rows.
    pub matched: usize,
    /// False when the diff ran out of time and settled for a valid but
    /// possibly non-minimal alignment.
    pub minimal: bool,
}

/// How long the diff may search for a minimal alignment before settling.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(5);

/// Aligns two key sequences (Myers' diff, minimal unless `deadline` passes).
/// `a_launches[i]` is the launch index that `a_keys[i]` belongs to.
pub fn align(
    a_keys: &[u32],
    a_launches: &[u32],
    b_keys: &[u32],
    b_launches: &[u32],
    deadline: Duration,
) -> Alignment {
    let stop = Instant::now() + deadline;
    let ops = similar::capture_diff_slices_deadline(Algorithm::Myers, a_keys, b_keys, Some(stop));
    let minimal = Instant::now() < stop;
    let mut rows = Vec::with_capacity(a_keys.len().max(b_keys.len()));
    let mut matched = 0;
    for op in ops {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                matched += len;
                rows.extend(
                    (0..len)
                        .map(|i| Row::Both(a_launches[old_index + i], b_launches[new_index + i])),
                );
            }
            DiffOp::Delete {
                old_index, old_len, ..
            } => rows.extend(
                a_launches[old_index..old_index + old_len]
                    .iter()
                    .map(|&a| Row::OnlyA(a)),
            ),
            DiffOp::Insert {
                new_index, new_len, ..
            } => rows.extend(
                b_launches[new_index..new_index + new_len]
                    .iter()
                    .map(|&b| Row::OnlyB(b)),
            ),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                rows.extend(
                    a_launches[old_index..old_index + old_len]
                        .iter()
                        .map(|&a| Row::OnlyA(a)),
                );
                rows.extend(
                    b_launches[new_index..new_index + new_len]
                        .iter()
                        .map(|&b| Row::OnlyB(b)),
                );
            }
        }
    }
    Alignment {
        rows,
        matched,
        minimal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lcs_len(a: &[u32], b: &[u32]) -> usize {
        let mut prev = vec![0usize; b.len() + 1];
        for &x in a {
            let mut cur = vec![0usize; b.len() + 1];
            for (j, &y) in b.iter().enumerate() {
                cur[j + 1] = if x == y {
                    prev[j] + 1
                } else {
                    prev[j + 1].max(cur[j])
                };
            }
            prev = cur;
        }
        prev[b.len()]
    }

    proptest! {
        #[test]
        fn alignment_is_an_order_preserving_minimal_matching(
            a in prop::collection::vec(0u32..4, 0..60),
            b in prop::collection::vec(0u32..4, 0..60),
        ) {
            let ia: Vec<u32> = (0..a.len() as u32).collect();
            let ib: Vec<u32> = (0..b.len() as u32).collect();
            let al = align(&a, &ia, &b, &ib, DEFAULT_DEADLINE);
            // Every launch appears exactly once, in order, on its side.
            let seen_a: Vec<u32> = al.rows.iter().filter_map(|r| r.a()).collect();
            let seen_b: Vec<u32> = al.rows.iter().filter_map(|r| r.b()).collect();
            prop_assert_eq!(seen_a, ia);
            prop_assert_eq!(seen_b, ib);
            // Matched rows pair equal keys, and as many as the LCS allows.
            for row in &al.rows {
                if let Row::Both(x, y) = row {
                    prop_assert_eq!(a[*x as usize], b[*y as usize]);
                }
            }
            prop_assert!(al.minimal);
            prop_assert_eq!(al.matched, lcs_len(&a, &b));
        }

        #[test]
        fn inserted_launches_leave_every_other_launch_matched(
            a in prop::collection::vec(0u32..5, 1..200),
            inserts in prop::collection::vec((0usize..200, 100u32..103), 0..10),
        ) {
            let mut b = a.clone();
            let mut sorted = inserts.clone();
            sorted.sort_by_key(|x| std::cmp::Reverse(x.0));
            for (at, key) in &sorted {
                b.insert((*at).min(b.len()), *key);
            }
            let ia: Vec<u32> = (0..a.len() as u32).collect();
            let ib: Vec<u32> = (0..b.len() as u32).collect();
            let al = align(&a, &ia, &b, &ib, DEFAULT_DEADLINE);
            prop_assert_eq!(al.matched, a.len());
            prop_assert_eq!(al.rows.iter().filter(|r| matches!(r, Row::OnlyB(_))).count(), inserts.len());
        }
    }
}

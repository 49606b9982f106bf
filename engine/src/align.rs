//! Aligns the launch sequences of two runs so that launches present in only
//! one of them do not shift every later pair.

use similar::{Algorithm, DiffOp};
use std::time::{Duration, Instant};
use tritontui_trace::Trace;

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

/// One run's side of an alignment: the key of each launch, the launch
/// index it belongs to, and whether it is weak (an allocation: a CUDA
/// graph makes its allocations once at capture, a run without one at
/// every step, so they anchor nothing).
#[derive(Debug, Clone, Copy)]
pub struct Side<'k> {
    /// Alignment keys, in execution order.
    pub keys: &'k [u32],
    /// The launch index of each key.
    pub launches: &'k [u32],
    /// Whether each key is weak.
    pub weak: &'k [bool],
}

/// Aligns two runs as [`align`] does, in two passes: the launches that are
/// not weak first (as many matched as can be), then, between each pair of
/// consecutive matched launches, the launches of both runs that lie
/// between them. Weak launches never pull strong ones out of place.
pub fn align_anchored(a: Side<'_>, b: Side<'_>, deadline: Duration) -> Alignment {
    let stop = Instant::now() + deadline;
    let strong = |side: Side<'_>| -> (Vec<u32>, Vec<u32>) {
        (0..side.keys.len())
            .filter(|&i| !side.weak[i])
            .map(|i| (side.keys[i], i as u32))
            .unzip()
    };
    let ((a_keys, a_at), (b_keys, b_at)) = (strong(a), strong(b));
    let anchors = align(&a_keys, &a_at, &b_keys, &b_at, deadline);
    let mut rows = Vec::with_capacity(a.keys.len().max(b.keys.len()));
    let mut minimal = anchors.minimal;
    let mut matched = 0;
    let (mut from_a, mut from_b) = (0, 0);
    let ends = anchors.rows.iter().filter_map(|row| match *row {
        Row::Both(i, j) => Some((i as usize, j as usize)),
        _ => None,
    });
    for end in ends.map(Some).chain([None]) {
        let (to_a, to_b) = end.unwrap_or((a.keys.len(), b.keys.len()));
        let left = stop.saturating_duration_since(Instant::now());
        let between = align(
            &a.keys[from_a..to_a],
            &a.launches[from_a..to_a],
            &b.keys[from_b..to_b],
            &b.launches[from_b..to_b],
            left,
        );
        minimal &= between.minimal;
        matched += between.matched;
        rows.extend(between.rows);
        if end.is_some() {
            rows.push(Row::Both(a.launches[to_a], b.launches[to_b]));
            matched += 1;
            (from_a, from_b) = (to_a + 1, to_b + 1);
        }
    }
    Alignment {
        rows,
        matched,
        minimal,
    }
}

/// The program launches of runs `a` and `b` aligned by the keys `keys`
/// gives them (equal keys: candidates for one row), allocations anchoring
/// nothing (a CUDA graph makes them once, at capture).
pub fn align_by(
    a: &Trace,
    b: &Trace,
    keys: impl FnOnce(&Trace, &[u32], &Trace, &[u32]) -> (Vec<u32>, Vec<u32>),
    deadline: Duration,
) -> Alignment {
    let launches =
        |t: &Trace| -> Vec<u32> { t.program_launches().map(|(i, _)| i as u32).collect() };
    let (a_launches, b_launches) = (launches(a), launches(b));
    let (a_keys, b_keys) = keys(a, &a_launches, b, &b_launches);
    let weak = |trace: &Trace, launches: &[u32]| -> Vec<bool> {
        launches
            .iter()
            .map(|&i| trace.kernel_of(&trace.launches[i as usize]).is_allocation())
            .collect()
    };
    let (a_weak, b_weak) = (weak(a, &a_launches), weak(b, &b_launches));
    let side = |keys, launches, weak| Side {
        keys,
        launches,
        weak,
    };
    align_anchored(
        side(&a_keys, &a_launches, &a_weak),
        side(&b_keys, &b_launches, &b_weak),
        deadline,
    )
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

    #[test]
    fn allocations_a_graph_made_at_capture_do_not_pull_its_kernels_out_of_place() {
        // A: allocations at capture (9, 9), then the replayed kernels
        // 1, 2, 3; B: each kernel after an allocation of its own.
        let a = [9, 9, 1, 2, 3];
        let b = [9, 1, 9, 2, 3];
        let weak = |keys: &[u32]| keys.iter().map(|&k| k == 9).collect::<Vec<_>>();
        let (wa, wb) = (weak(&a), weak(&b));
        let launches: Vec<u32> = (0..5).collect();
        let side = |keys, weak| Side {
            keys,
            launches: &launches,
            weak,
        };
        let al = align_anchored(side(&a, &wa), side(&b, &wb), DEFAULT_DEADLINE);
        let pairs: Vec<(u32, u32)> = al
            .rows
            .iter()
            .filter_map(|r| match r {
                Row::Both(x, y) => Some((*x, *y)),
                _ => None,
            })
            .collect();
        // Every kernel pairs with its counterpart; one allocation pairs.
        let kernels: Vec<_> = pairs.iter().filter(|(x, _)| a[*x as usize] != 9).collect();
        assert_eq!(kernels, [&(2, 1), &(3, 3), &(4, 4)], "{:?}", al.rows);
        assert_eq!(pairs.len(), 4, "{:?}", al.rows);
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
        fn anchored_alignment_matches_strong_launches_first_and_keeps_order(
            keys_a in prop::collection::vec(0u32..6, 0..60),
            keys_b in prop::collection::vec(0u32..6, 0..60),
        ) {
            // Keys 4 and 5 are weak (allocations).
            let weak = |keys: &[u32]| keys.iter().map(|&k| k >= 4).collect::<Vec<_>>();
            let (weak_a, weak_b) = (weak(&keys_a), weak(&keys_b));
            let ia: Vec<u32> = (0..keys_a.len() as u32).collect();
            let ib: Vec<u32> = (0..keys_b.len() as u32).collect();
            let side = |keys, launches, weak| Side { keys, launches, weak };
            let al = align_anchored(
                side(&keys_a, &ia, &weak_a),
                side(&keys_b, &ib, &weak_b),
                DEFAULT_DEADLINE,
            );
            let seen_a: Vec<u32> = al.rows.iter().filter_map(|r| r.a()).collect();
            let seen_b: Vec<u32> = al.rows.iter().filter_map(|r| r.b()).collect();
            prop_assert_eq!(seen_a, ia);
            prop_assert_eq!(seen_b, ib);
            let mut strong = 0;
            for row in &al.rows {
                if let Row::Both(x, y) = row {
                    prop_assert_eq!(keys_a[*x as usize], keys_b[*y as usize]);
                    strong += usize::from(keys_a[*x as usize] < 4);
                }
            }
            let strong_of = |keys: &[u32]| keys.iter().copied().filter(|&k| k < 4).collect::<Vec<_>>();
            prop_assert_eq!(strong, lcs_len(&strong_of(&keys_a), &strong_of(&keys_b)));
            prop_assert_eq!(al.matched, al.rows.iter().filter(|r| matches!(r, Row::Both(..))).count());
            prop_assert!(al.minimal);
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

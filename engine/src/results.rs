//! The two runs' results compared tensor by tensor: the tensors alive when
//! recording stopped (`results` records) are paired across the runs and
//! their hashes compared. Results that differ make the runs divergent,
//! whatever the launches say: the results decide.

use crate::producer::{Origin, ResultWriter};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use tritontui_trace::{LiveTensor, Trace};

/// One result whose bits differ between the runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultDifference {
    /// Index into run A's `Trace::results`.
    pub a: usize,
    /// Index into run B's `Trace::results`.
    pub b: usize,
    /// What last wrote it in run A (unknown when the data flow was not
    /// followed).
    pub writer_a: Option<ResultWriter>,
    /// What last wrote it in run B.
    pub writer_b: Option<ResultWriter>,
    /// The divergence whose differing write the result holds; `None`
    /// makes the difference a root cause of its own.
    pub explained_by: Option<usize>,
}

/// How the runs' results compare.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResultComparison {
    /// Results paired across the runs whose hashes could be compared.
    pub compared: usize,
    /// Results of A and of B left without a counterpart.
    pub unpaired: (usize, usize),
    /// The pairs whose bits differ, in run A's order.
    pub differences: Vec<ResultDifference>,
    /// For each result of A, then of B: whether it was paired with a
    /// counterpart holding the same bits (nothing that reached only it
    /// changed the results).
    pub settled: (Vec<bool>, Vec<bool>),
    /// For each result of A, then of B: whether it has a counterpart.
    pub paired: (Vec<bool>, Vec<bool>),
}

/// The view of a result that its counterpart must share.
type ViewKey<'t> = (i32, &'t str, &'t [u64], &'t [i64]);

fn view_key<'t>(trace: &'t Trace, t: &LiveTensor) -> ViewKey<'t> {
    let layout = &trace.layouts[t.layout as usize];
    (
        t.device,
        layout.dtype.as_str(),
        layout.shape.as_slice(),
        layout.stride.as_slice(),
    )
}

/// Pairs the runs' results and compares each pair's hashes. With the
/// writers of each run's results (`Flow::result_writers`) and `b_of_a`,
/// the launch of B aligned to a launch of A, a result last written by a
/// launch is paired with the result its counterpart launch last wrote;
/// the others (and all, without writers) pair up by view, in the order
/// the runs recorded them.
pub fn compare(
    a: &Trace,
    b: &Trace,
    writers: Option<(&[ResultWriter], &[ResultWriter])>,
    b_of_a: impl Fn(u32) -> Option<u32>,
) -> ResultComparison {
    let (Some(ra), Some(rb)) = (a.results.as_deref(), b.results.as_deref()) else {
        return ResultComparison::default();
    };
    let writer_of = |side: Option<&[ResultWriter]>, i: usize| side.and_then(|w| w.get(i)).copied();
    let (wa, wb) = match writers {
        Some((wa, wb)) => (Some(wa), Some(wb)),
        None => (None, None),
    };
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut paired_b = vec![false; rb.len()];
    let mut paired_a = vec![false; ra.len()];
    if let (Some(wa), Some(wb)) = (wa, wb) {
        let mut by_writer: FxHashMap<(u32, u16, ViewKey<'_>), VecDeque<usize>> =
            FxHashMap::default();
        for (j, t) in rb.iter().enumerate() {
            if let Some(Origin::Launch(y, arg)) = wb.get(j).map(|w| w.origin) {
                by_writer
                    .entry((y, arg, view_key(b, t)))
                    .or_default()
                    .push_back(j);
            }
        }
        for (i, t) in ra.iter().enumerate() {
            let Some(Origin::Launch(x, arg)) = wa.get(i).map(|w| w.origin) else {
                continue;
            };
            let Some(y) = b_of_a(x) else { continue };
            if let Some(j) = by_writer
                .get_mut(&(y, arg, view_key(a, t)))
                .and_then(VecDeque::pop_front)
            {
                pairs.push((i, j));
                paired_a[i] = true;
                paired_b[j] = true;
            }
        }
    }
    let mut by_view: FxHashMap<ViewKey<'_>, VecDeque<usize>> = FxHashMap::default();
    for (j, t) in rb.iter().enumerate().filter(|(j, _)| !paired_b[*j]) {
        by_view.entry(view_key(b, t)).or_default().push_back(j);
    }
    let left: Vec<usize> = (0..ra.len()).filter(|&i| !paired_a[i]).collect();
    for i in left {
        if let Some(j) = by_view
            .get_mut(&view_key(a, &ra[i]))
            .and_then(VecDeque::pop_front)
        {
            pairs.push((i, j));
            paired_a[i] = true;
            paired_b[j] = true;
        }
    }
    pairs.sort_unstable();
    let mut comparison = ResultComparison {
        unpaired: (
            paired_a.iter().filter(|p| !**p).count(),
            paired_b.iter().filter(|p| !**p).count(),
        ),
        settled: (vec![false; ra.len()], vec![false; rb.len()]),
        ..ResultComparison::default()
    };
    comparison.paired = (paired_a, paired_b);
    for (i, j) in pairs {
        let (Some(x), Some(y)) = (ra[i].hash, rb[j].hash) else {
            continue;
        };
        comparison.compared += 1;
        if x == y {
            comparison.settled.0[i] = true;
            comparison.settled.1[j] = true;
        } else {
            comparison.differences.push(ResultDifference {
                a: i,
                b: j,
                writer_a: writer_of(wa, i),
                writer_b: writer_of(wb, j),
                explained_by: None,
            });
        }
    }
    comparison
}

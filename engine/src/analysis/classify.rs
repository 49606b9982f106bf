//! The first pass: every aligned pair compared and classified, and each
//! run of launches present in one run only made one structural divergence.
//! Inputs are not yet explained.

use super::{Divergence, Impact, Kind, RowStatus};
use crate::align::{Alignment, Row};
use crate::compare::{Comparer, PairDiff};
use tritontui_trace::{ArgIndex, Trace};

/// Compares every matched pair and groups unmatched runs; inputs are not
/// yet explained.
pub(super) fn classify_rows(
    a: &Trace,
    b: &Trace,
    alignment: &Alignment,
) -> (Vec<RowStatus>, Vec<Divergence>) {
    let rows = &alignment.rows;
    // Compare in two halves on two threads; pair comparisons are independent.
    let mid = rows.len() / 2;
    let (first, second) = crate::parallel::both(
        || compare_rows(a, b, &rows[..mid], 0),
        || compare_rows(a, b, &rows[mid..], mid),
    );
    let mut statuses = vec![RowStatus::Equal; rows.len()];
    let mut divergences = Vec::new();
    let mut pairs = first.into_iter().chain(second).peekable();
    let mut row = 0;
    while row < rows.len() {
        if !matches!(rows[row], Row::Both(..)) {
            let start = row;
            while row < rows.len() && !matches!(rows[row], Row::Both(..)) {
                row += 1;
            }
            let index = divergences.len() as u32;
            statuses[start..row].fill(RowStatus::Divergent(index));
            divergences.push(structural_run(a, b, rows, start, row));
            continue;
        }
        if let (Some((_, diff)), Row::Both(x, y)) = (pairs.next_if(|(r, _)| *r == row), rows[row]) {
            let (kind, args) = if diff.inputs.is_empty() {
                (
                    kind_on_equal_inputs(a, b, (x, y), &diff),
                    diff.outputs.clone(),
                )
            } else {
                (Some(Kind::DivergentInput), diff.inputs.clone())
            };
            match kind {
                None => statuses[row] = RowStatus::Benign,
                Some(kind) => {
                    statuses[row] = RowStatus::Divergent(divergences.len() as u32);
                    divergences.push(Divergence {
                        kind,
                        row,
                        rows: 1,
                        a: rows[row].a(),
                        b: rows[row].b(),
                        only: (0, 0),
                        args,
                        origins: Vec::new(),
                        reached_from: None,
                        root: 0, // set by find_roots
                        absorbed: kind == Kind::DivergentInput
                            && diff.outputs_agree()
                            && !reads_to_host(a, rows[row]),
                        impact: Impact::Reaches, // set by assess_impact
                        diff: Some(diff),
                    });
                }
            }
        }
        row += 1;
    }
    (statuses, divergences)
}

/// The non-empty comparisons of the matched rows in `rows`, with their row
/// numbers (`offset` is the row number of `rows[0]`).
fn compare_rows(a: &Trace, b: &Trace, rows: &[Row], offset: usize) -> Vec<(usize, PairDiff)> {
    let mut comparer = Comparer::new(a, b);
    rows.iter()
        .enumerate()
        .filter_map(|(i, row)| match *row {
            Row::Both(x, y) => {
                let diff = comparer.compare(x, y);
                (!diff.is_empty()).then_some((offset + i, diff))
            }
            _ => None,
        })
        .collect()
}

/// The kind of aligned launches `x` of run A and `y` of run B whose
/// inputs agree, or are taken to, as `diff` says how they differ
/// otherwise; `None` when their bits agree despite other differences. A
/// kernel whose outputs differ on equal inputs while settings that can
/// explain it differ is put down to them.
pub(super) fn kind_on_equal_inputs(
    a: &Trace,
    b: &Trace,
    (x, y): (u32, u32),
    diff: &PairDiff,
) -> Option<Kind> {
    let launch = &a.launches[x as usize];
    let kernel = a.kernel_of(launch);
    let kind = outputs_kind(diff, kernel.is_collective())?;
    let (sa, sb) = (launch.seq, b.launches[y as usize].seq);
    if kind == Kind::NondeterministicKernel
        && !crate::settings::Explaining::at(a, sa, b, sb, &kernel.backend).is_empty()
    {
        return Some(Kind::Settings);
    }
    Some(kind)
}

/// The kind of a matched pair whose inputs agree (`collective`: its
/// kernel is one); `None` when its bits agree despite other differences.
fn outputs_kind(diff: &PairDiff, collective: bool) -> Option<Kind> {
    // With outputs not hashed, a different launch cannot be shown harmless.
    let outputs_differ =
        !diff.outputs.is_empty() || (diff.outputs_unhashed && diff.static_difference());
    if !outputs_differ {
        return None;
    }
    Some(if diff.source {
        Kind::Code
    } else if !diff.layout.is_empty() {
        Kind::Structural
    } else if diff.config || diff.grid {
        Kind::LaunchConfig
    } else if collective {
        Kind::Collective
    } else {
        Kind::NondeterministicKernel
    })
}

/// A run of rows `start..end` with launches in one run only.
fn structural_run(a: &Trace, b: &Trace, rows: &[Row], start: usize, end: usize) -> Divergence {
    let first_a = rows[start..end].iter().find_map(|r| r.a());
    let first_b = rows[start..end].iter().find_map(|r| r.b());
    let only_a = rows[start..end].iter().filter(|r| r.a().is_some()).count();
    // When both runs launched the same kernel here, name the arguments whose
    // shape or dtype differ.
    let mut args = Vec::new();
    if let (Some(x), Some(y)) = (first_a, first_b) {
        let (lx, ly) = (&a.launches[x as usize], &b.launches[y as usize]);
        if a.kernel_of(lx).name == b.kernel_of(ly).name {
            for (i, (p, q)) in a.args_of(lx).zip(b.args_of(ly)).enumerate() {
                use tritontui_trace::ArgRef::Tensor;
                let same = match (p, q) {
                    (Tensor(p), Tensor(q)) => {
                        p.layout.dtype == q.layout.dtype && p.layout.shape == q.layout.shape
                    }
                    (p, q) => std::mem::discriminant(&p) == std::mem::discriminant(&q),
                };
                if !same {
                    args.push(i as ArgIndex);
                }
            }
        }
    }
    Divergence {
        kind: Kind::Structural,
        row: start,
        rows: end - start,
        a: first_a,
        b: first_b,
        only: (only_a, end - start - only_a),
        args,
        origins: Vec::new(),
        reached_from: None,
        root: 0, // set by find_roots
        diff: None,
        absorbed: false,
        impact: Impact::Reaches, // set by assess_impact
    }
}

/// Whether the launch of run A in `row` hands what it reads to the host.
pub(super) fn reads_to_host(a: &Trace, row: Row) -> bool {
    row.a()
        .is_some_and(|x| a.kernel_of(&a.launches[x as usize]).is_host_read())
}

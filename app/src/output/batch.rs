//! One request compared by its rows in the `diff` report (`batch`), and
//! its batch-variant launch as a root cause.

use super::report::{DivergenceReport, LaunchRef, Reach, RowsReport};
use serde::Serialize;
use tritontui_engine::batch::{BatchComparison, BatchVariant};
use tritontui_engine::{Kind, Sides, TracePair};

/// One request compared by its rows (both traces recorded with `rows`).
#[derive(Debug, Clone, Serialize)]
pub struct BatchReport {
    /// How many requests each run batches (`{a, b}`).
    pub batch: Sides<u64>,
    /// The request compared in each run.
    pub request: Sides<u64>,
    /// Aligned launches compared by the request's rows.
    pub compared: usize,
    /// Launches of each run left out of the alignment.
    pub unaligned: Sides<usize>,
    /// The first batch-variant launch (also the first root cause), or
    /// null when none is.
    pub first_variant: Option<VariantReport>,
    /// Launches after it whose request rows differ because what they read
    /// already did.
    pub carried: usize,
    /// Launches before any batch-variant one that read no differing input
    /// and wrote a batched tensor whose rows the traces do not hold.
    pub unjudged: usize,
    /// What the comparison says, a line each (as `diff` prints them).
    pub detail: Vec<String>,
}

/// A batch-variant launch.
#[derive(Debug, Clone, Serialize)]
pub struct VariantReport {
    /// Sequence number in A and in B.
    pub a_index: u64,
    pub b_index: u64,
    /// Kernel name.
    pub kernel: String,
    /// Each written argument whose request rows differ: its name, the
    /// request's rows in it (0: compared whole) and the request-relative
    /// indices of the rows that differ.
    pub args: Vec<RowsReport>,
}

impl BatchReport {
    /// The report of `batch`.
    pub fn new(runs: TracePair<'_>, batch: &BatchComparison) -> BatchReport {
        let first_variant = batch.root_cause.as_ref().map(|root| VariantReport {
            a_index: runs.seq_a(root.a),
            b_index: runs.seq_b(root.b),
            kernel: runs
                .a
                .kernel_of(&runs.a.launches[root.a as usize])
                .name
                .clone(),
            args: differing_rows(runs, root),
        });
        BatchReport {
            batch: Sides {
                a: batch.batch.0,
                b: batch.batch.1,
            },
            request: Sides {
                a: batch.request.0,
                b: batch.request.1,
            },
            compared: batch.compared,
            unaligned: Sides {
                a: batch.unaligned.0,
                b: batch.unaligned.1,
            },
            first_variant,
            carried: batch.carried,
            unjudged: batch.unjudged,
            detail: crate::words::batch::summary_lines(runs, batch),
        }
    }
}

/// The batch-variant launch of `batch` as a root cause, if there is one.
pub fn root_cause(runs: TracePair<'_>, batch: &BatchComparison) -> Option<DivergenceReport> {
    let root = batch.root_cause.as_ref()?;
    let kernel = runs.a.kernel_of(&runs.a.launches[root.a as usize]);
    let writer = LaunchRef {
        a_index: Some(runs.seq_a(root.a)),
        b_index: Some(runs.seq_b(root.b)),
        kernel: kernel.name.clone(),
    };
    Some(DivergenceReport {
        kind: Kind::BatchVariant,
        root_cause: true,
        absorbed: false,
        impact: Reach::ReachesResults,
        absorbed_by: Vec::new(),
        a_index: writer.a_index,
        b_index: writer.b_index,
        kernel: writer.kernel.clone(),
        args: root
            .args
            .iter()
            .map(|d| kernel.arg_name(usize::from(d.arg)))
            .collect(),
        // The request's rows (request-relative indices).
        rows: differing_rows(runs, root),
        producer: None,
        origin: None,
        overwritten: None,
        in_replay: Sides { a: None, b: None },
        compile_settings: None,
        only_in_a: 0,
        only_in_b: 0,
        reached_from: None,
        root: writer,
        detail: crate::words::batch::variant_words(runs, root),
        impact_detail: "the request's later rows carry it".to_owned(),
        values: None,
        values_error: None,
    })
}

/// The request's rows that differ in each argument a batch-variant launch
/// wrote (request-relative indices; 0 rows: compared whole).
fn differing_rows(runs: TracePair<'_>, root: &BatchVariant) -> Vec<RowsReport> {
    let kernel = runs.a.kernel_of(&runs.a.launches[root.a as usize]);
    root.args
        .iter()
        .map(|d| RowsReport {
            arg: kernel.arg_name(usize::from(d.arg)),
            rows: d.rows,
            differing: d.differing.clone(),
        })
        .collect()
}

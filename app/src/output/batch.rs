//! One request compared by its rows in the `diff` report (`batch`).

use super::rows::RowsReport;
use serde::Serialize;
use tritontui_engine::batch::{BatchComparison, BatchVariant};
use tritontui_engine::{Sides, TracePair};

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
    /// Launches whose written request rows differ.
    pub differing: usize,
    /// Launches before any batch-variant one that read no differing input
    /// but could not be judged (rows the traces do not hold, or an input
    /// that could not be compared).
    pub unjudged: usize,
    /// The first of them, by sequence number in A and in B.
    pub first_unjudged: Option<Sides<u64>>,
    /// The first launch, before any batch-variant one, that read request
    /// rows which already differed.
    pub first_read_differing: Option<Sides<u64>>,
    /// Stretches of launches only one run made, not compared.
    pub one_sided: usize,
    /// The request's rows of the program's results.
    pub results: RequestResultsReport,
    /// What the comparison says, a line each (as `diff` prints them).
    pub detail: Vec<String>,
}

/// The request's rows of run A's results, each judged by the launch that
/// last wrote it.
#[derive(Debug, Clone, Serialize)]
pub struct RequestResultsReport {
    /// Results whose request rows were compared.
    pub compared: usize,
    /// Those whose request rows differ, as `result_name` names them.
    pub differing: Vec<String>,
    /// Results a recorded launch wrote that could not be judged.
    pub unknown: usize,
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
    /// Where the batch sizes compiled the launch into other kernels: each
    /// run's launches of that stretch, by sequence number (null for one
    /// aligned launch).
    pub stretch: Option<Sides<Vec<u64>>>,
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
            stretch: (!root.stretch.0.is_empty()).then(|| Sides {
                a: root.stretch.0.iter().map(|&i| runs.seq_a(i)).collect(),
                b: root.stretch.1.iter().map(|&i| runs.seq_b(i)).collect(),
            }),
        });
        let seqs = |(a, b): (u32, u32)| Sides {
            a: runs.seq_a(a),
            b: runs.seq_b(b),
        };
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
            differing: batch.differing,
            unjudged: batch.unjudged,
            first_unjudged: batch.first_unjudged.map(seqs),
            first_read_differing: batch.first_read_differing.map(seqs),
            one_sided: batch.one_sided,
            results: RequestResultsReport {
                compared: batch.results.compared,
                differing: batch
                    .results
                    .differing
                    .iter()
                    .filter_map(|&i| {
                        let result = runs.a.results.as_deref()?.get(i)?;
                        Some(crate::words::result_name(runs.a, result))
                    })
                    .collect(),
                unknown: batch.results.unknown,
            },
            detail: crate::words::batch::summary_lines(runs, batch),
        }
    }
}

/// The request's rows that differ in each argument a batch-variant launch
/// wrote (request-relative indices; 0 rows: compared whole).
pub(super) fn differing_rows(runs: TracePair<'_>, root: &BatchVariant) -> Vec<RowsReport> {
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

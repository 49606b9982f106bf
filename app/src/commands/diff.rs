//! `tritontui diff A B`: two traces, or two folders of rank traces.

use super::args::DiffArgs;
use super::inputs::{both_folders, load_pair, load_reference, options, requests};
use super::output::print_diff;
use super::status::{ExitCode, verdict_status};
use crate::Report;
use tritontui_engine::{Analysis, Options};

/// `tritontui diff A B`.
pub(super) fn diff(args: &DiffArgs) -> anyhow::Result<ExitCode> {
    if both_folders(&args.a, &args.b)? {
        return diff_ranks(args);
    }
    let (a, b) = load_pair(&args.a, &args.b)?;
    let reference = load_reference(args.reference.as_deref())?;
    let options = Options {
        requests: requests(&args.request, &args.batch)?,
        ..options(args.align_deadline)?
    };
    let analysis = Analysis::run_against(&a, &b, reference.as_ref(), options);
    if analysis.batch.is_none() && !(args.request.is_empty() && args.batch.is_empty()) {
        let flag = if args.request.is_empty() {
            "--batch"
        } else {
            "--request"
        };
        match [&a, &b].into_iter().find(|t| !t.has_rows()) {
            Some(t) => anyhow::bail!(
                "{flag}: {} holds no row hashes (record it with --rows)",
                t.path.display()
            ),
            None => anyhow::bail!(
                "{flag}: no request to compare: it is past a run's batch, or no tensor's shapes differ in their first extent alone (give --batch A:N B:M)"
            ),
        }
    }
    let report = Report::new(&a, &b, &analysis, args.limit);
    print_diff(
        &report,
        args.json,
        crate::output::summary,
        verdict_status(analysis.verdict),
    )
}

/// `tritontui diff RUN_A RUN_B` on two folders of rank traces.
fn diff_ranks(args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let report =
        crate::ranks::diff::compare(&args.a, &args.b, options(args.align_deadline)?, args.limit)?;
    let status = verdict_status(report.verdict());
    print_diff(&report, args.json, crate::ranks::diff::summary, status)
}

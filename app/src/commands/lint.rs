//! `tritontui lint`: every launch against constraint profiles.

use super::args::LintArgs;
use super::output::print_diff;
use super::status::{ExitCode, FOUND, SUCCESS};
use tritontui_trace::Trace;

/// `tritontui lint TRACE`.
pub(super) fn lint(args: &LintArgs) -> anyhow::Result<ExitCode> {
    let names: Vec<&str> = if args.profile.is_empty() {
        crate::lint::profile::SHIPPED
            .iter()
            .map(|(n, _)| *n)
            .collect()
    } else {
        args.profile.iter().map(String::as_str).collect()
    };
    let profiles = names
        .into_iter()
        .map(crate::lint::profile::Profile::load)
        .collect::<anyhow::Result<Vec<_>>>()?;
    let trace = Trace::open(&args.trace)?;
    let report = crate::lint::lint(&trace, &profiles);
    let status = if report.violations.is_empty() {
        SUCCESS
    } else {
        FOUND
    };
    print_diff(&report, args.json, crate::lint::summary, status)
}

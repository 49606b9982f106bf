//! `tritontui values A B LAUNCH`: a launch's captured values in two runs.

use super::args::ValuesArgs;
use super::output::print_diff;
use super::status::{ExitCode, FOUND, SUCCESS};

/// `tritontui values`.
pub(super) fn values(args: &ValuesArgs) -> anyhow::Result<ExitCode> {
    let report = crate::values::compare(&args.a, &args.b, args.launch)?;
    let status = if report.equal() { SUCCESS } else { FOUND };
    print_diff(&report, args.json, crate::values::summary, status)
}

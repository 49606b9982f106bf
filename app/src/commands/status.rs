//! Exit statuses of the commands.

use tritontui_engine::analysis::Verdict;

/// Exit status of a command.
pub type ExitCode = u8;
/// Done: identical or benign for a comparison.
pub const SUCCESS: ExitCode = 0;
/// Found what was looked for: the runs' results differ, a lint violation.
pub const FOUND: ExitCode = 1;
/// A comparison whose traces did not see everything, where nothing seen
/// differs: neither agreement nor a difference is shown.
pub const INCONCLUSIVE: ExitCode = 3;

/// The exit status a comparison's verdict gives.
pub(super) fn verdict_status(verdict: Verdict) -> ExitCode {
    match verdict {
        Verdict::Identical | Verdict::Benign | Verdict::Equivalent => SUCCESS,
        Verdict::Divergent => FOUND,
        Verdict::Inconclusive => INCONCLUSIVE,
    }
}

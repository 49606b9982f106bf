//! What the commands print on stdout.

use super::status::ExitCode;
use std::io::Write;

/// Prints a diff report (as JSON, or its `summary`) and returns `status`.
pub(super) fn print_diff<R: serde::Serialize>(
    report: &R,
    json: bool,
    summary: fn(&R) -> String,
    status: ExitCode,
) -> anyhow::Result<ExitCode> {
    let text = if json {
        let mut json = serde_json::to_string_pretty(report)?;
        json.push('\n');
        json
    } else {
        summary(report)
    };
    print_ignoring_closed_pipe(&text)?;
    Ok(status)
}

/// Writes to stdout; a reader that went away (`| head`) is not an error.
pub(super) fn print_ignoring_closed_pipe(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

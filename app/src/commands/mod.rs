//! The `tritontui` command: parses flags and dispatches to each command's
//! own module. The binary runs it, and so does the Python package's
//! `tritontui` command (`python -m tritontui`), through the extension.

mod args;
mod attach;
mod check;
mod check_compare;
mod check_runs;
mod check_steps;
mod diff;
mod dump;
mod inputs;
mod lint;
mod output;
mod ranks;
mod record;
mod report;
mod repro;
mod resume;
mod status;
mod tui;
mod values;
mod values_rerun;

use args::{Cli, Command};
use clap::Parser;
use std::ffi::OsString;

pub use status::ExitCode;
use status::SUCCESS;

/// Runs the command line `args` (the program name first) and returns the
/// exit status: 0 success (identical or benign for a comparison), 1
/// divergent, 2 an error, which is printed as one line, 3 inconclusive
/// (the traces did not see everything, and nothing seen differs).
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with status 0, mistakes to
            // stderr with status 2.
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    let result = match cli.command {
        Some(Command::Diff(args)) => diff::diff(&args),
        Some(Command::Dump(args)) => dump::dump(&args).map(|()| SUCCESS),
        Some(Command::Record(args)) => record::record(&args),
        Some(Command::Check(args)) => check::check(&args),
        Some(Command::Ranks(args)) => ranks::ranks(&args),
        Some(Command::Values(args)) => values::values(&args),
        Some(Command::Repro(args)) => repro::repro(&args).map(|()| SUCCESS),
        Some(Command::Report(args)) => report::report(&args).map(|()| SUCCESS),
        Some(Command::Lint(args)) => lint::lint(&args),
        Some(Command::Attach(args)) => attach::attach(&args),
        Some(Command::Resume(args)) => resume::resume(&args).map(|()| SUCCESS),
        None => tui::tui(&cli.traces, cli.align_deadline).map(|()| SUCCESS),
    };
    result.unwrap_or_else(|err| {
        eprintln!("tritontui: {err:#}");
        2
    })
}

//! `tritontui ranks RUN`: the ranks of one run against each other.

use super::args::RanksArgs;
use super::output::print_diff;
use super::status::{ExitCode, FOUND, SUCCESS};

/// `tritontui ranks RUN`.
pub(super) fn ranks(args: &RanksArgs) -> anyhow::Result<ExitCode> {
    if !args.run.is_dir() {
        anyhow::bail!(
            "{}: not a folder of rank traces (`tritontui record -o 'RUN/rank{{rank}}.msgpack' -- torchrun ...` writes one)",
            args.run.display()
        );
    }
    let check = crate::ranks::check::check(&args.run)?;
    let status = if check.agree() { SUCCESS } else { FOUND };
    print_diff(&check, args.json, crate::ranks::check::summary, status)
}

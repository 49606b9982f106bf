//! `tritontui resume TRACE`: the trace's paused processes resumed.

use super::args::ResumeArgs;
use super::attach::trace_targets;
use crate::attach;
use anyhow::Context;

/// `tritontui resume`: resumes the trace's paused processes.
pub(super) fn resume(args: &ResumeArgs) -> anyhow::Result<()> {
    let targets = trace_targets(&args.trace)?;
    let resumed = attach::resume(&targets)
        .with_context(|| format!("{}: cannot resume", args.trace.display()))?;
    if resumed.is_empty() {
        eprintln!("tritontui: {}: no process is paused", args.trace.display());
    }
    for pid in resumed {
        eprintln!("tritontui: resumed pid {pid}");
    }
    Ok(())
}

//! `tritontui dump TRACE`: a trace as JSON Lines.

use super::args::DumpArgs;
use std::io::Write;
use tritontui_trace::Trace;

/// `tritontui dump TRACE`.
pub(super) fn dump(args: &DumpArgs) -> anyhow::Result<()> {
    let trace = Trace::open(&args.trace)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match crate::dump::dump(&trace, &mut out).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

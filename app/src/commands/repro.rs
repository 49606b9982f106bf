//! `tritontui repro`: a standalone reproducer of one captured launch.

use super::args::ReproArgs;

/// `tritontui repro TRACE LAUNCH`.
pub(super) fn repro(args: &ReproArgs) -> anyhow::Result<()> {
    let script = crate::repro::write(
        &args.trace,
        args.launch,
        &args.output,
        args.runs,
        args.against.as_deref(),
    )?;
    eprintln!(
        "tritontui: wrote {}; run it with `python {}` (exit 1: the kernel alone is nondeterministic)",
        args.output.display(),
        script.display()
    );
    Ok(())
}

//! `tritontui attach TRACE`: a debugger on a recorded process.

use super::args::AttachArgs;
use super::output::print_ignoring_closed_pipe;
use super::status::{ExitCode, SUCCESS};
use crate::attach;
use anyhow::Context;
use tritontui_trace::Trace;

/// The attach targets of a trace, labelled with its file name.
pub(super) fn trace_targets(path: &std::path::Path) -> anyhow::Result<Vec<attach::Target>> {
    let trace = Trace::open(path)?;
    let label = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    Ok(attach::targets(&trace, &label))
}

/// `tritontui attach`: lists the targets, or runs the debugger on one.
pub(super) fn attach(args: &AttachArgs) -> anyhow::Result<ExitCode> {
    let targets = trace_targets(&args.trace)?;
    if args.list {
        let mut text = String::from("PID      ROLE            HOST             ALIVE   STATE\n");
        for t in &targets {
            let alive = match t.alive {
                attach::Alive::Yes => "yes",
                attach::Alive::Ended => "no",
                attach::Alive::Remote => "?",
            };
            text += &format!(
                "{:<8} {:<15} {:<16} {:<7} {}\n",
                t.pid,
                t.role,
                t.host,
                alive,
                t.state()
            );
        }
        print_ignoring_closed_pipe(&text)?;
        return Ok(SUCCESS);
    }
    let path = args.trace.display();
    let target = match args.pid {
        Some(pid) => targets
            .iter()
            .find(|t| t.pid == pid)
            .with_context(|| format!("{path}: recorded no process {pid}"))?,
        None => default_target(&targets).with_context(|| {
            format!("{path}: no paused or live process to attach to; see --list")
        })?,
    };
    if let Some(why) = attach::obstacle(target) {
        anyhow::bail!("{path}: {why}");
    }
    let mut command = attach::debugger_command(target);
    let status = command
        .status()
        .with_context(|| format!("{}: cannot run", command.get_program().to_string_lossy()))?;
    Ok(status.code().map_or(2, |c| u8::try_from(c).unwrap_or(2)))
}

/// The paused process, else the only live one.
pub(super) fn default_target(targets: &[attach::Target]) -> Option<&attach::Target> {
    let paused: Vec<_> = targets.iter().filter(|t| t.paused.is_some()).collect();
    let live: Vec<_> = targets
        .iter()
        .filter(|t| t.alive == attach::Alive::Yes)
        .collect();
    match (paused.as_slice(), live.as_slice()) {
        ([first, ..], _) => Some(first),
        ([], [only]) => Some(only),
        _ => None,
    }
}

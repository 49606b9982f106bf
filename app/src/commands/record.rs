//! `tritontui record -- COMMAND`: a program run with the recorder on.

use super::args::RecordArgs;
use super::status::ExitCode;
use anyhow::Context;
use tritontui_trace::options;

/// Runs the command with the recorder's environment; its exit status
/// becomes ours.
pub(super) fn record(args: &RecordArgs) -> anyhow::Result<ExitCode> {
    let (program, rest) = args
        .command
        .split_first()
        .context("give the command to record after --")?;
    let mut command = recorded(program, rest, &args.output, &args.hash, args.no_aten);
    command.env(options::KERNELS.env, &args.kernels);
    if let Some(points) = &args.break_at {
        command.env(options::BREAK_AT.env, points);
    }
    if let Some(selection) = &args.capture {
        command.env(options::CAPTURE.env, selection);
    }
    if let Some(budget) = args.capture_budget {
        command.env(options::CAPTURE_BUDGET.env, budget.to_string());
    }
    if let Some(name) = &args.hash_fn {
        command.env(options::HASH_FN.env, name);
    }
    if args.samples {
        command.env(options::SAMPLES.env, "1");
    }
    if args.rows {
        command.env(options::ROWS.env, "1");
    }
    let status = command
        .status()
        .with_context(|| format!("{program}: cannot run"))?;
    let code = status.code().map_or(2, |c| u8::try_from(c).unwrap_or(2));
    if code == 0 {
        eprintln!("tritontui: recorded to {}", args.output.display());
    }
    Ok(code)
}

/// `program rest...` with the recorder's environment: it records into
/// `trace` with the options' variables (`tritontui_trace::options`) set
/// (a pause point the user's environment sets, `TRITONTUI_BREAK`, stays).
pub(super) fn recorded(
    program: &str,
    rest: &[String],
    trace: &std::path::Path,
    hash: &str,
    no_aten: bool,
) -> std::process::Command {
    let mut command = std::process::Command::new(program);
    command
        .args(rest)
        .env("TRITONTUI_RECORD", trace)
        .env(options::HASH.env, hash)
        .env(options::ATEN.env, if no_aten { "0" } else { "1" });
    command
}

/// `command` run unattended (by `check`): no pause point of the user's
/// environment stops it, and no fingerprint option of it decides what is
/// recorded.
pub(super) fn unattended(mut command: std::process::Command) -> std::process::Command {
    for option in [
        options::BREAK_AT,
        options::FINGERPRINT,
        options::FROM_STEP,
        options::TO_STEP,
    ] {
        command.env_remove(option.env);
    }
    command
}

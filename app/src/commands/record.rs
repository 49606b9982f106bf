//! `tritontui record -- COMMAND`: a program run with the recorder on.

use super::args::RecordArgs;
use super::status::ExitCode;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
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
    let started = SystemTime::now();
    let status = command
        .status()
        .with_context(|| format!("{program}: cannot run"))?;
    let code = status.code().map_or(2, |c| u8::try_from(c).unwrap_or(2));
    if code == 0 {
        if !recorded_since(&args.output, started) {
            anyhow::bail!(
                "{}: `{program}` ran but recorded nothing there: its Python did not start the recorder (install the tritontui package where that Python finds its site packages; a folder on PYTHONPATH does not start it)",
                args.output.display()
            );
        }
        eprintln!("tritontui: recorded to {}", args.output.display());
    }
    Ok(code)
}

/// Whether a program told to record into `output` wrote a trace there
/// since `started`: `output` itself or the rank traces beside it
/// (`NAME-rank{N}.msgpack`, which each rank of a run of several writes
/// when `output` names no rank), with any value in the name's
/// placeholders (`{pid}`, `{rank}`). Taken as true where the folder
/// itself holds a placeholder.
fn recorded_since(output: &Path, started: SystemTime) -> bool {
    // A file system may keep coarser times than the clock.
    let since = started - Duration::from_secs(2);
    let fresh = |path: &Path| {
        std::fs::metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|modified| modified >= since)
    };
    let name = output.file_name().unwrap_or_default().to_string_lossy();
    if !name.contains('{') {
        return fresh(output)
            || rank_traces_beside(output).is_ok_and(|ranks| ranks.iter().any(|p| fresh(p)));
    }
    let folder = match output.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => return true,
    };
    if folder.to_string_lossy().contains('{') {
        return true;
    }
    let mut patterns = vec![name.to_string()];
    if !name.contains("{rank}") {
        let stem = output.file_stem().unwrap_or_default().to_string_lossy();
        let extension = output
            .extension()
            .map(|e| format!(".{}", e.to_string_lossy()))
            .unwrap_or_default();
        patterns.push(format!("{stem}-rank{{rank}}{extension}"));
    }
    let Ok(entries) = std::fs::read_dir(folder) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|entry| {
        let found = entry.file_name().to_string_lossy().into_owned();
        fresh(&entry.path()) && patterns.iter().any(|p| fills(p, &found))
    })
}

/// Whether `name` is `pattern` with each `{placeholder}` filled in by
/// some text.
fn fills(pattern: &str, name: &str) -> bool {
    let mut pieces = Vec::new();
    let mut rest = pattern;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        pieces.push(&rest[..open]);
        rest = &rest[open + close + 1..];
    }
    pieces.push(rest);
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if pieces.len() == 1 {
        return name == first;
    }
    let Some(mut left) = name.strip_prefix(first) else {
        return false;
    };
    let Some(body) = left.strip_suffix(last) else {
        return false;
    };
    left = body;
    for piece in &pieces[1..pieces.len() - 1] {
        match left.find(piece) {
            Some(at) => left = &left[at + piece.len()..],
            None => return false,
        }
    }
    true
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

/// The rank traces ranks write when told to record into `trace`:
/// `NAME-rank{N}.EXT` beside `NAME.EXT` (the recorder's
/// `_session.expand_path`).
pub(super) fn rank_traces_beside(trace: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let dir = match trace.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let stem = trace.file_stem().unwrap_or_default().to_string_lossy();
    let prefix = format!("{stem}-rank");
    let suffix = trace
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let mut found = Vec::new();
    for entry in
        std::fs::read_dir(dir).with_context(|| format!("{}: cannot read", dir.display()))?
    {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let rank = name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(suffix.as_str()));
        if rank.is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit())) {
            found.push(path);
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::fills;

    #[test]
    fn a_placeholder_stands_for_any_text() {
        assert!(fills("run.msgpack", "run.msgpack"));
        assert!(!fills("run.msgpack", "run2.msgpack"));
        assert!(fills("rank{rank}.msgpack", "rank0.msgpack"));
        assert!(fills("run-rank{rank}.msgpack", "run-rank12.msgpack"));
        assert!(fills("{pid}-r{rank}.msgpack", "991-r3.msgpack"));
        assert!(!fills("rank{rank}.msgpack", "rank0.json"));
        assert!(!fills("t{pid}x{rank}.msgpack", "t1.msgpack"));
    }
}

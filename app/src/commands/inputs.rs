//! What the comparing commands share: two traces opened side by side,
//! the analysis options, and whether two runs are folders of ranks.

use crate::loader::open_pair;
use anyhow::Context;
use std::time::Duration;
use tritontui_engine::Options;
use tritontui_engine::batch::Requests;
use tritontui_trace::Trace;

/// Loads two traces side by side, warning about any that ended early.
pub(super) fn load_pair(
    a: &std::path::Path,
    b: &std::path::Path,
) -> anyhow::Result<(Trace, Trace)> {
    let (ta, tb) = open_pair(a, b, &|_, path| Trace::open(path))?;
    for trace in [&ta, &tb] {
        if let Some(end) = &trace.early_end {
            eprintln!(
                "tritontui: warning: {}: the trace ended early ({}); comparing the {} launches it has",
                trace.path.display(),
                end,
                trace.launches.len()
            );
        }
    }
    Ok((ta, tb))
}

/// The trace of `--reference TRACE`, if given: it must hold samples.
pub(super) fn load_reference(path: Option<&std::path::Path>) -> anyhow::Result<Option<Trace>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let trace = Trace::open(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    if !trace.has_samples() {
        anyhow::bail!(
            "{}: the reference trace holds no samples (record it with --samples, or record(samples=True))",
            path.display()
        );
    }
    Ok(Some(trace))
}

/// The analysis options of `--align-deadline SECONDS`.
pub(super) fn options(align_deadline: f64) -> anyhow::Result<Options> {
    let deadline = Duration::try_from_secs_f64(align_deadline)
        .context("--align-deadline must be a non-negative number of seconds")?;
    Ok(Options {
        align_deadline: deadline,
        ..Options::default()
    })
}

/// The requests of `--request A:N B:N` and `--batch A:N B:N` (each empty
/// when not given).
pub(super) fn requests(request: &[String], batch: &[String]) -> anyhow::Result<Requests> {
    let mut requests = Requests::default();
    if !request.is_empty() {
        requests.index = per_run("--request", request)?;
    }
    if !batch.is_empty() {
        let (a, b) = per_run("--batch", batch)?;
        if a == 0 || b == 0 {
            anyhow::bail!("--batch: each run batches at least one request");
        }
        if requests.index.0 >= a || requests.index.1 >= b {
            anyhow::bail!(
                "--request {}:{}: past the batches of --batch A:{a} B:{b}",
                requests.index.0,
                requests.index.1
            );
        }
        requests.batch = Some((a, b));
    }
    Ok(requests)
}

/// `(a, b)` from `A:N B:M` (in either order).
fn per_run(flag: &str, values: &[String]) -> anyhow::Result<(u64, u64)> {
    let mut found = (None, None);
    for value in values {
        let parsed = value
            .split_once(':')
            .and_then(|(run, n)| Some((run, n.parse::<u64>().ok()?)));
        match parsed {
            Some(("A" | "a", n)) if found.0.is_none() => found.0 = Some(n),
            Some(("B" | "b", n)) if found.1.is_none() => found.1 = Some(n),
            _ => anyhow::bail!("{flag}: `{value}` is not A:N or B:N (give one of each)"),
        }
    }
    match found {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => anyhow::bail!("{flag}: give A:N and B:N"),
    }
}

/// Whether runs `a` and `b` are folders of rank traces (true) or traces
/// (false); one of each is an error.
pub(super) fn both_folders(a: &std::path::Path, b: &std::path::Path) -> anyhow::Result<bool> {
    match (a.is_dir(), b.is_dir()) {
        (true, true) => Ok(true),
        (false, false) => Ok(false),
        (a_is_dir, _) => {
            let (dir, file) = if a_is_dir { (a, b) } else { (b, a) };
            anyhow::bail!(
                "{}: a folder of rank traces, but {} is one trace: give two folders or two traces",
                dir.display(),
                file.display()
            );
        }
    }
}

//! `check`'s escalation from hashes to values: once runs diverge, the
//! program runs twice more, capturing the first divergence that reaches
//! the results (and the launch that produced its divergent input), so
//! that the user gets the values that differ without choosing anything;
//! a kernel whose outputs differ on equal inputs is then rerun alone on
//! its captured inputs (`tritontui repro`), which confirms or refutes
//! that it is nondeterministic by itself.

use crate::output::report::{DivergenceReport, Reach, Report};
use crate::values::{self, ValuesReport};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What the two capturing runs found.
#[derive(Debug, Serialize)]
pub struct Escalation {
    /// The launches captured (numbers in the first run's trace).
    pub launches: Vec<u64>,
    /// The capturing runs' traces.
    pub traces: [PathBuf; 2],
    /// The captured launch compared across the two runs; null when it
    /// could not be (`note` says why).
    pub values: Option<ValuesReport>,
    /// Why there are no values, or what to make of them.
    pub note: Option<String>,
    /// The kernel rerun alone on its captured inputs, when it is called
    /// nondeterministic (inputs equal, outputs differ).
    pub rerun: Option<Rerun>,
}

/// The captured kernel rerun alone, several times, on the inputs the
/// first capturing run captured.
#[derive(Debug, Serialize)]
pub struct Rerun {
    /// How many times it ran.
    pub runs: u32,
    /// True: its outputs differed between reruns (confirmed); false: they
    /// never did (not reproduced alone); null: it could not run here.
    pub confirmed: Option<bool>,
    /// The most distinct results one of its outputs gave.
    pub distinct: Option<u32>,
    /// What the reruns show, in words.
    pub words: String,
}

/// Reruns launch `launch` of `trace` (captured) alone `runs` times with
/// `python`, through a reproducer written into `dir`.
pub fn rerun_alone(
    trace: &Path,
    launch: u64,
    dir: &Path,
    python: &std::ffi::OsStr,
    runs: u32,
) -> Rerun {
    let failed = |why: String| Rerun {
        runs,
        confirmed: None,
        distinct: None,
        words: format!("the kernel could not be rerun alone: {why}"),
    };
    let script = match crate::repro::write(trace, launch, dir, runs, None) {
        Ok(script) => script,
        Err(e) => return failed(format!("{e:#}")),
    };
    let output = match std::process::Command::new(python)
        .arg(&script)
        .args(["--runs", &runs.to_string()])
        .stdin(std::process::Stdio::null())
        .output()
    {
        Ok(output) => output,
        Err(e) => return failed(format!("{}: {e}", python.to_string_lossy())),
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    // `  out_ptr0: 3 distinct results; against run A: ...`
    let distinct = stdout
        .lines()
        .filter_map(|line| {
            let (_, rest) = line.split_once(": ")?;
            rest.split_once(" distinct result")?.0.parse::<u32>().ok()
        })
        .max();
    match output.status.code() {
        Some(1) => Rerun {
            runs,
            confirmed: Some(true),
            distinct,
            words: format!(
                "confirmed: {runs} reruns of the kernel alone on its captured inputs gave {} different outputs",
                distinct.map_or("several".to_owned(), |n| n.to_string())
            ),
        },
        Some(0) => Rerun {
            runs,
            confirmed: Some(false),
            distinct,
            words: format!(
                "not reproduced alone: {runs} reruns of the kernel alone on its captured inputs gave the same bits; something outside its arguments differs between the runs"
            ),
        },
        _ => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let last = stderr.lines().last().or(stdout.lines().last());
            failed(last.unwrap_or("it failed").trim().to_owned())
        }
    }
}

/// The divergence to capture: the first root cause that reaches the
/// results, else the first divergence; None when it has no launch in run
/// A (only run B made it).
fn target(report: &Report) -> Option<&DivergenceReport> {
    report
        .root_causes
        .iter()
        .find(|d| d.impact == Reach::ReachesResults)
        .or(report.first_divergence.as_ref())
        .filter(|d| d.a_index.is_some())
}

/// Runs the program twice more with the divergence of `report` captured
/// (`run(trace, selection)` runs it once, recording into `trace`), and
/// compares the captured values; None when there is nothing to capture.
pub fn escalate(
    report: &Report,
    dir: &Path,
    run: impl Fn(&Path, &str, usize) -> anyhow::Result<()>,
) -> anyhow::Result<Option<Escalation>> {
    let Some(divergence) = target(report) else {
        return Ok(None);
    };
    let Some(launch) = divergence.a_index else {
        return Ok(None);
    };
    let mut launches = vec![launch];
    launches.extend(divergence.producer.as_ref().and_then(|p| p.a_index));
    let selection: Vec<String> = launches.iter().map(u64::to_string).collect();
    let traces = [dir.join("values0.msgpack"), dir.join("values1.msgpack")];
    for (i, trace) in traces.iter().enumerate() {
        run(trace, &selection.join(","), i)?;
    }
    let (values, note) = match values::compare(&traces[0], &traces[1], launch) {
        Ok(report) if report.equal() => (
            Some(report),
            Some(format!(
                "launch {launch} held the same bits in both capturing runs: the nondeterminism did not show again; run `check` with more runs"
            )),
        ),
        Ok(report) => (Some(report), None),
        Err(e) => (None, Some(format!("{e:#}"))),
    };
    Ok(Some(Escalation {
        launches,
        traces,
        values,
        note,
        rerun: None,
    }))
}

/// Whether the escalated divergence is a kernel whose outputs differ on
/// equal inputs: what a rerun alone can confirm.
pub fn wants_rerun(report: &Report) -> bool {
    target(report).is_some_and(|d| d.kind == tritontui_engine::Kind::NondeterministicKernel)
}

/// The escalation in words, after the verdict.
pub fn summary(escalation: &Escalation) -> String {
    let mut out = format!(
        "\nvalues: two more runs captured launch {} ({}, {})\n",
        escalation
            .launches
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(" and "),
        escalation.traces[0].display(),
        escalation.traces[1].display()
    );
    if let Some(values) = &escalation.values {
        out += &values::summary(values);
    }
    if let Some(note) = &escalation.note {
        out += &format!("{note}\n");
    }
    if let Some(rerun) = &escalation.rerun {
        out += &format!("rerun alone: {}\n", rerun.words);
    }
    out
}

//! `check`'s escalation from hashes to values: once runs diverge, the
//! program runs twice more, capturing the first divergence that reaches
//! the results (and the launch that produced its divergent input), so
//! that the user gets the values that differ without choosing anything.

use crate::report::{DivergenceReport, Reach, Report};
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
    }))
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
    out
}

//! `tritontui check --steps`: a long program run twice recording only
//! fingerprints; the first step where they differ, and the one before it,
//! then recorded in full by two more runs (`from_step`, `to_step`), which
//! `check` compares as it compares any runs. In runs of several ranks the
//! earliest step any rank parts at is the runs'.

use super::check_compare::trace_pairs;
use super::check_runs::Runs;
use anyhow::Context;
use std::path::PathBuf;
use tritontui_engine::analysis::Verdict;
use tritontui_engine::fingerprints::FingerprintComparison;
use tritontui_engine::{Analysis, Options, TracePair};
use tritontui_trace::Trace;
use tritontui_trace::options::{FINGERPRINT, FROM_STEP, TO_STEP};

/// How many times the steps recorded in full move earlier, when the runs
/// recording them part before the first of them (nondeterminism that
/// does not strike at the same step each run); after that the last
/// recording is compared as it is.
const WINDOW_MOVES: usize = 2;

/// What the fingerprints found.
pub(super) enum Zoomed {
    /// Every fingerprint agrees and so do the results: the verdict, said.
    Agree(String),
    /// The runs recorded in full to compare, the recording options that
    /// chose their steps (for more runs of the same steps), and what led
    /// there (lines said before the verdict, and the same as JSON).
    Window {
        traces: Vec<PathBuf>,
        window: Vec<(&'static str, String)>,
        said: Vec<String>,
        json: serde_json::Value,
    },
}

/// Runs the program with fingerprints, then the steps where they first
/// part in full.
pub(super) fn zoom(runs: &Runs<'_>, options: Options) -> anyhow::Result<Zoomed> {
    let fingerprinted = runs.all("fingerprints", &[(FINGERPRINT.env, "1".into())])?;
    let mut earliest: Option<((Option<u64>, usize), String)> = None;
    let mut results_differ = false;
    // A fingerprint trace with gaps (a recording stopped on an error) can
    // never show the runs agree.
    let mut unseen = false;
    let mut compared = 0;
    let mut steps = None;
    for path in &fingerprinted[1..] {
        // Each rank's traces are compared on their own; the earliest step
        // any rank parts at is the runs'.
        let mut in_run = 0;
        for (rank, a, b) in trace_pairs(&fingerprinted[0], path)? {
            let (first, other) = (Trace::open(&a)?, Trace::open(&b)?);
            let analysis = Analysis::run(&first, &other, options);
            let fingerprints = analysis.fingerprints.as_ref().with_context(|| {
                format!(
                    "{}: no fingerprints recorded (does the program run under tritontui's \
                     recorder?)",
                    b.display()
                )
            })?;
            in_run += fingerprints.counts.a;
            steps = steps.max(first.steps.fingerprinted_steps());
            results_differ |= !analysis.results.differences.is_empty();
            unseen |= analysis.verdict == Verdict::Inconclusive;
            if let Some(difference) = &fingerprints.first_difference {
                let pair = TracePair {
                    a: &first,
                    b: &other,
                };
                let line = crate::words::fingerprints::headline(pair, difference);
                let line = match rank {
                    Some(rank) => format!("rank {rank}: {line}"),
                    None => line,
                };
                // Within a step, the rank whose fingerprints parted at an
                // earlier point of it.
                let at = (difference.step, difference.in_step);
                if earliest.as_ref().is_none_or(|(earlier, _)| at < *earlier) {
                    earliest = Some((at, line));
                }
            }
        }
        // (Every rank's fingerprints count.)
        compared = compared.max(in_run);
    }
    let parting_step = earliest.as_ref().and_then(|((s, _), _)| *s);
    let json = |window: Option<(u64, u64)>, said: &[String]| {
        serde_json::json!({
            "fingerprint_traces": fingerprinted,
            "fingerprints": compared,
            "steps": steps,
            "first_difference_step": parting_step,
            "window": window.map(|(from, to)| [from, to]),
            "said": said,
        })
    };
    // Every step recorded in full, `said` first.
    let everything = |said: Vec<String>| -> anyhow::Result<Zoomed> {
        let traces = runs.all("run", &[])?;
        let json = json(None, &said);
        Ok(Zoomed::Window {
            traces,
            window: Vec::new(),
            said,
            json,
        })
    };
    let (step, headline) = match earliest {
        None if !results_differ && !unseen => {
            return Ok(Zoomed::Agree(format!(
                "deterministic: {} runs of `{}` fingerprinted {compared} points{} alike (graph \
                 calls' outputs, host reads, collectives, the state at each step's end), and \
                 their results agree bit for bit\n",
                fingerprinted.len(),
                runs.shown,
                steps.map_or(String::new(), |n| format!(" over {n} steps")),
            )));
        }
        // The results differ where no fingerprint looks (eager work outside
        // graph calls and steps): everything is recorded.
        None if results_differ => {
            return everything(vec![
                "every fingerprint agrees but the results differ: the difference is in work no \
                 fingerprint covers (eager ops outside graph calls); recording every step"
                    .to_owned(),
            ]);
        }
        None => {
            return everything(vec![
                "every fingerprint agrees, but the fingerprint runs did not see everything \
                 (their traces have gaps); recording every step"
                    .to_owned(),
            ]);
        }
        Some(((step, _), headline)) => (step, headline),
    };
    let Some(step) = step else {
        return everything(vec![
            headline,
            "the program ended no step (no optimizer's step() and no tritontui.step()): \
             recording all of it"
                .to_owned(),
        ]);
    };
    let mut said = vec![headline];
    let mut from = step.saturating_sub(1);
    let mut moves = 0;
    loop {
        let window = vec![
            (FROM_STEP.env, from.to_string()),
            (TO_STEP.env, step.to_string()),
        ];
        eprintln!("tritontui: recording steps {from} to {step} in full");
        let traces = runs.all("run", &window)?;
        match parted_before_window(&traces)? {
            Some(earlier) if earlier < from && moves < WINDOW_MOVES => {
                said.push(format!(
                    "the runs recording steps {from} to {step} in full parted earlier, at step \
                     {earlier}: recording from step {} instead",
                    earlier.saturating_sub(1)
                ));
                from = earlier.saturating_sub(1);
                moves += 1;
            }
            _ => {
                said.push(format!("steps {from} to {step} recorded in full:"));
                let json = json(Some((from, step)), &said);
                return Ok(Zoomed::Window {
                    traces,
                    window,
                    said,
                    json,
                });
            }
        }
    }
}

/// The earliest step where the fingerprints (before the steps recorded
/// in full) of a run differ from the first run's, if any.
fn parted_before_window(traces: &[PathBuf]) -> anyhow::Result<Option<u64>> {
    let mut earliest: Option<u64> = None;
    for path in &traces[1..] {
        for (_, a, b) in trace_pairs(&traces[0], path)? {
            let step = FingerprintComparison::of(&Trace::open(&a)?, &Trace::open(&b)?)
                .and_then(|f| f.first_difference)
                .and_then(|d| d.step);
            earliest = match (earliest, step) {
                (Some(e), Some(s)) => Some(e.min(s)),
                (e, s) => e.or(s),
            };
        }
    }
    Ok(earliest)
}

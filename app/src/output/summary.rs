//! The short human summary `tritontui diff` prints: the runs, what
//! differs in their settings, compiles and programs, the results, the verdict and
//! the root causes, in words.

use super::report::{InReplay, Reach, Report};
use crate::words::at_words;
use std::fmt::Write as _;
use tritontui_engine::Sides;
use tritontui_engine::analysis::Verdict;

/// Where a divergence's launches ran when one ran in a CUDA graph replay:
/// `A: replay 3 of CUDA graph 2, B: ran on its own`.
pub fn replay_words(in_replay: &Sides<Option<InReplay>>) -> Option<String> {
    if in_replay.a.is_none() && in_replay.b.is_none() {
        return None;
    }
    let side = |run: &str, r: Option<InReplay>| match r {
        Some(r) => format!("{run}: replay {} of CUDA graph {}", r.replay, r.graph),
        None => format!("{run}: not in a CUDA graph"),
    };
    Some(format!(
        "{}, {}",
        side("A", in_replay.a),
        side("B", in_replay.b)
    ))
}

/// What differs in the runs' use of CUDA graphs, in words, if anything.
fn graph_use_words(replays: &Sides<usize>) -> Option<String> {
    (replays.a != replays.b).then(|| {
        format!(
            "CUDA graph replays differ: A {}, B {} (what runs in a graph differs; launches are compared kernel by kernel as usual)",
            replays.a, replays.b
        )
    })
}

/// The short human summary printed by `tritontui diff`.
pub fn summary(report: &Report) -> String {
    let mut out = String::new();
    for (name, run, count) in [
        ("A", &report.runs.a, report.launches.a),
        ("B", &report.runs.b, report.launches.b),
    ] {
        let mut line = format!("{name}  {}  {count} launches", run.path);
        if let Some(torch) = &run.torch {
            line.push_str(&format!("  torch {torch}"));
        }
        if let Some(device) = run.devices.first() {
            line.push_str(&format!("  {device}"));
        }
        if let Some(early) = &run.ended_early {
            line.push_str(&format!("  (ended early: {early})"));
        }
        if let Some(raised) = &run.raised {
            line.push_str(&format!("  (its program raised {raised})"));
        }
        let _ = writeln!(out, "{line}");
    }
    if !report.settings.is_empty() {
        let _ = writeln!(out, "settings differ (A | B):");
        for line in crate::words::setting_lines(&report.settings) {
            let _ = writeln!(out, "  {line}");
        }
    }
    if !report.compile_differences.is_empty() {
        let _ = writeln!(out, "compiled differently:");
        for line in crate::words::compile_lines(&report.compile_differences) {
            let _ = writeln!(out, "  {line}");
        }
    }
    let programs = crate::words::program_lines(&report.programs);
    if !programs.is_empty() {
        let _ = writeln!(out, "different programs:");
        for line in &programs {
            let _ = writeln!(out, "  {line}");
        }
    }
    if let Some(fingerprints) = &report.fingerprints {
        let _ = writeln!(out, "fingerprints:");
        for line in &fingerprints.detail {
            let _ = writeln!(out, "  {line}");
        }
    }
    if let Some(accuracy) = &report.accuracy {
        let _ = writeln!(out, "numerics (from samples):");
        for line in &accuracy.detail {
            let _ = writeln!(out, "  {line}");
        }
    }
    if let Some(batch) = &report.batch {
        let _ = writeln!(out, "batch (request rows):");
        for line in &batch.detail {
            let _ = writeln!(out, "  {line}");
        }
    }
    if let Some(words) = graph_use_words(&report.cuda_graph_replays) {
        let _ = writeln!(out, "{words}");
    }
    let unseen = crate::words::unseen_work(&report.gaps.a, &report.gaps.b);
    if !unseen.is_empty() {
        let _ = writeln!(out, "not seen:");
        for line in &unseen {
            let _ = writeln!(out, "  {line}");
        }
    }
    if report.results.differ > 0 {
        let _ = writeln!(
            out,
            "results differ: {} of {} compared",
            report.results.differ, report.results.compared
        );
    }
    let by_request_rows = report
        .batch
        .as_ref()
        .is_some_and(|batch| batch.results.compared > 0);
    if report.results.unpaired_a + report.results.unpaired_b > 0 {
        let _ = writeln!(
            out,
            "results without a counterpart {}: {} in A, {} in B",
            if by_request_rows {
                "of their shape (not compared whole; by the request's rows above)"
            } else {
                "(not compared)"
            },
            report.results.unpaired_a,
            report.results.unpaired_b
        );
    }
    if report.results.held_a + report.results.held_b > 0 {
        let _ = writeln!(
            out,
            "tensors held from before recording, unchanged (not compared): {} in A, {} in B",
            report.results.held_a, report.results.held_b
        );
    }
    if let Some(line) = fingerprints_only_headline(report) {
        let _ = writeln!(out, "{line}");
        return out;
    }
    let Some(first) = &report.first_divergence else {
        let _ = if report.verdict == Verdict::Inconclusive {
            writeln!(
                out,
                "inconclusive: {} launches aligned and every recorded launch wrote the same bits, but the traces did not see everything (above)",
                report.launches.matched
            )
        } else {
            writeln!(
                out,
                "identical: {} launches aligned, every launch wrote the same bits",
                report.launches.matched
            )
        };
        return out;
    };
    let roots = report.root_causes.len();
    let reaching = report
        .root_causes
        .iter()
        .filter(|r| r.impact == Reach::ReachesResults)
        .count();
    let uncompared = report
        .divergences
        .iter()
        .filter(|d| d.impact == Reach::Uncompared)
        .count();
    let headline = match report.verdict {
        Verdict::Inconclusive => format!(
            "inconclusive: {} divergence{}, none seen to reach the results, but the traces did not see everything (above)",
            report.divergence_count,
            plural(report.divergence_count),
        ),
        Verdict::Benign if uncompared > 0 => format!(
            "benign: {} divergence{}, none reaching a result both runs have, and those agree bit for bit ({uncompared} wrote only into results the other run lacks)",
            report.divergence_count,
            plural(report.divergence_count),
        ),
        Verdict::Benign if by_request_rows => format!(
            "benign: the request's rows differ on the way and are absorbed before the results, whose request rows agree bit for bit ({} divergence{} in all)",
            report.divergence_count,
            plural(report.divergence_count),
        ),
        Verdict::Benign => format!(
            "benign: {} divergence{}, every difference absorbed before the results, which agree bit for bit",
            report.divergence_count,
            plural(report.divergence_count),
        ),
        Verdict::Identical => format!(
            "identical: the request's rows agree in every one of the {} launches compared alone and batched; the runs' {} divergence{} {} of shape, not of the request's values",
            report.batch.as_ref().map_or(0, |b| b.compared),
            report.divergence_count,
            plural(report.divergence_count),
            if report.divergence_count == 1 {
                "is"
            } else {
                "are"
            },
        ),
        Verdict::Equivalent => format!(
            "equivalent: two programs whose results differ in bits ({} of {}), {} (numerics above)",
            report.results.differ,
            report.results.compared,
            if report
                .accuracy
                .as_ref()
                .is_some_and(|a| a.results_within_reference)
            {
                "every differing result within the accuracy minifier's rule against the reference run"
            } else {
                "every aligned point and differing result within what the arithmetic allows"
            }
        ),
        // Two programs whose random numbers part: what follows is not
        // judged.
        _ if roots == 0
            && report
                .accuracy
                .as_ref()
                .is_some_and(|a| a.random_parting.is_some()) =>
        {
            format!(
                "divergent: two programs whose results differ in bits ({} of {}) and that draw other random numbers; before they part, their numerics name no root cause (see numerics above)",
                report.results.differ, report.results.compared
            )
        }
        // Two programs whose numerics name no root cause: the results
        // differ, and the points past their bound are suspects.
        _ if roots == 0 && report.accuracy.is_some() => format!(
            "divergent: two programs whose results differ in bits ({} of {}); their numerics name no root cause (see numerics above)",
            report.results.differ, report.results.compared
        ),
        _ => format!(
            "divergent: {} divergence{}, {} root cause{} ({} reaching the results)",
            report.divergence_count,
            plural(report.divergence_count),
            roots,
            plural(roots),
            reaching
        ),
    };
    let _ = writeln!(
        out,
        "{headline}{}",
        if report.alignment == "approximate" {
            " (alignment approximate)"
        } else {
            ""
        }
    );
    if report.absorbed_count > 0 {
        let _ = writeln!(
            out,
            "{} launch{} read differing inputs and wrote equal outputs (absorbed)",
            report.absorbed_count,
            if report.absorbed_count == 1 { "" } else { "es" }
        );
    }
    if !(report.results_recorded.a && report.results_recorded.b) {
        let _ = writeln!(
            out,
            "a trace does not record the program's results: every last write counts as one"
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{}  {}  {}  {}",
        if matches!(report.verdict, Verdict::Equivalent | Verdict::Identical) {
            "the programs first differ"
        } else if first.impact == Reach::Absorbed {
            "first divergence (absorbed)"
        } else {
            "first divergence"
        },
        at_words(first.step, first.a_index, first.b_index),
        first.kernel,
        first.kind.as_str()
    );
    let _ = writeln!(out, "  {}", first.detail);
    if let Some(words) = replay_words(&first.in_replay) {
        let _ = writeln!(out, "  {words}");
    }
    let _ = writeln!(out, "  {}", first.impact_detail);
    for line in crate::values::differing_lines(first.values.as_deref().unwrap_or_default()) {
        let _ = writeln!(out, "  values: {line}");
    }
    if let Some(error) = &first.values_error {
        let _ = writeln!(out, "  values: {error}");
    }
    let leads_elsewhere =
        (first.root.a_index, first.root.b_index) != (first.a_index, first.b_index);
    if let Some(root) =
        (!first.root_cause && !first.absorbed && leads_elsewhere).then_some(&first.root)
    {
        let _ = writeln!(
            out,
            "  leads back to {}  {}",
            crate::words::index_words(root.a_index, root.b_index),
            root.kernel
        );
    }
    if roots == 0 {
        return out;
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "root causes ({roots})");
    const SHOWN: usize = 10;
    for root in report.root_causes.iter().take(SHOWN) {
        let _ = writeln!(
            out,
            "  {}  {}  {}  {}  ({})",
            at_words(root.step, root.a_index, root.b_index),
            root.kernel,
            root.kind.as_str(),
            root.args.join(", "),
            root.impact_detail
        );
    }
    if roots > SHOWN {
        let _ = writeln!(out, "  ... and {} more (see --json)", roots - SHOWN);
    }
    let propagated = report
        .divergence_count
        .saturating_sub(roots + report.absorbed_count);
    if propagated > 0 {
        let _ = writeln!(
            out,
            "{propagated} more divergent launch{} downstream of these; --json shows how each was reached",
            if propagated == 1 { " is" } else { "es are" }
        );
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The headline of two runs recorded only as fingerprints (no launch
/// recorded in full): where they part, and how to find the kernel; or
/// that they agree.
fn fingerprints_only_headline(report: &Report) -> Option<String> {
    let fingerprints = report.fingerprints.as_ref()?;
    if report.launches.a + report.launches.b > 0 {
        return None;
    }
    Some(match (&fingerprints.first_difference, report.verdict) {
        (Some(first), _) => format!(
            "divergent: {} (fingerprints above)",
            crate::words::fingerprints::where_to_look(first.step)
        ),
        (None, Verdict::Identical) => format!(
            "identical: every one of the {} fingerprints agrees, and so do the results",
            fingerprints.counts.a
        ),
        (None, _) => return None,
    })
}

//! The run lines and the verdict line.

use crate::tui::app::App;
use crate::tui::comparison::Comparison;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use tritontui_engine::TracePair;
use tritontui_engine::analysis::Verdict;
use tritontui_trace::Trace;

fn run_line<'a>(app: &App, label: &'a str, trace: &Trace, launches: usize) -> Line<'a> {
    let theme = &app.theme;
    let h = &trace.header;
    let mut facts = Vec::new();
    if let Some(torch) = &h.torch {
        facts.push(format!("torch {torch}"));
    }
    if let Some(triton) = &h.triton {
        facts.push(format!("triton {triton}"));
    }
    if let Some(device) = h.devices.first() {
        facts.push(device.clone());
    }
    facts.push(format!("{launches} launches"));
    let mut spans = vec![
        Span::styled(label, theme.title()),
        Span::raw(trace.path.display().to_string()),
        Span::styled(format!("  {}", facts.join(" · ")), theme.dim()),
    ];
    if let Some(end) = &trace.early_end {
        spans.push(Span::styled(
            format!("  ended early: {}", end),
            theme.only(),
        ));
    }
    if let Some(raised) = trace.raised() {
        spans.push(Span::styled(format!("  raised {raised}"), theme.only()));
    }
    Line::from(spans)
}

/// `rank 2 of 4 ✗ ` before the verdict of one rank of runs of several
/// ranks (✗: the earliest cause across ranks is on it); nothing otherwise.
fn rank_spans<'a>(app: &App, comparison: &Comparison) -> Vec<Span<'a>> {
    let Some(place) = &comparison.rank else {
        return Vec::new();
    };
    let theme = &app.theme;
    let mut spans = vec![Span::styled(
        format!("rank {} of {} ", place.rank, place.set.ranks.len()),
        theme.title(),
    )];
    match place.set.earliest_cause {
        Some(rank) if rank == place.rank => {
            spans.push(Span::styled("(earliest cause) ", theme.root()));
        }
        Some(rank) => spans.push(Span::styled(
            format!("(earliest cause: rank {rank}) "),
            theme.dim(),
        )),
        None => {}
    }
    spans
}

/// The step where the runs' fingerprints first differ (None inside when
/// steps are unknown), when they do.
fn parted_fingerprints(comparison: &Comparison) -> Option<Option<u64>> {
    let analysis = comparison.analysis.as_ref()?;
    let first = analysis.fingerprints.as_ref()?.first_difference.as_ref()?;
    Some(first.step)
}

/// Draws the header.
pub fn render(app: &App, comparison: &Comparison, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let Some(b) = &comparison.b else {
        let line = run_line(app, "", &comparison.a, comparison.rows().len());
        frame.render_widget(Paragraph::new(line), area);
        return;
    };
    let (na, nb) = comparison.analysis.as_ref().map_or((0, 0), |a| a.launches);
    let mut lines = vec![
        run_line(app, "A ", &comparison.a, na),
        run_line(app, "B ", b, nb),
    ];
    if !comparison.settings.is_empty() {
        lines.push(Line::from(vec![
            Span::styled("SETTINGS DIFFER (A | B)  ", theme.only()),
            Span::raw(crate::words::setting_lines(&comparison.settings).join(" · ")),
        ]));
    }
    if !comparison.programs.is_empty() {
        lines.push(Line::from(vec![
            Span::styled("DIFFERENT PROGRAMS  ", theme.only()),
            Span::raw(comparison.programs.join(" · ")),
        ]));
    }
    let runs = TracePair {
        a: &comparison.a,
        b,
    };
    let verdict_now = comparison.analysis.as_ref().map(|a| a.verdict);
    if let Some((past, words)) = &comparison.numerics {
        let (label, style) = if *past {
            ("ACCURACY  ", theme.root())
        } else {
            ("NUMERICS  ", theme.only())
        };
        lines.push(Line::from(vec![
            Span::styled(label, style),
            Span::raw(words.clone()),
        ]));
    }
    // One request's rows in two batchings: the batch-variant launch first.
    if let Some(batch) = comparison.analysis.as_ref().and_then(|a| a.batch.as_ref()) {
        let (label, style) = if batch.root_cause.is_some() {
            ("BATCH-VARIANT  ", theme.root())
        } else {
            ("BATCH  ", theme.only())
        };
        let lines_said = crate::words::batch::summary_lines(runs, batch);
        lines.push(Line::from(vec![
            Span::styled(label, style),
            Span::raw(lines_said[1..].join(" · ")),
        ]));
    }
    // Runs recorded as fingerprints: the step where they part first.
    if let Some(fingerprints) = comparison
        .analysis
        .as_ref()
        .and_then(|a| a.fingerprints.as_ref())
    {
        let style = if fingerprints.first_difference.is_some() {
            theme.root()
        } else {
            theme.only()
        };
        lines.push(Line::from(vec![
            Span::styled("FINGERPRINTS  ", style),
            Span::raw(crate::words::fingerprints::lines(runs, fingerprints).join(" · ")),
        ]));
    }
    if let Some(analysis) = &comparison.analysis {
        let unseen = crate::words::unseen_work(&analysis.gaps.a, &analysis.gaps.b);
        if !unseen.is_empty() {
            lines.push(Line::from(vec![
                Span::styled("NOT SEEN  ", theme.only()),
                Span::raw(unseen.join(" · ")),
            ]));
        }
        let unexplained: Vec<usize> = analysis.unexplained_results().collect();
        if let Some(&first) = unexplained.first() {
            lines.push(Line::from(vec![
                Span::styled(
                    format!(
                        "RESULTS DIFFER ({} of {}, {} unexplained)  ",
                        analysis.results.differences.len(),
                        analysis.results.compared,
                        unexplained.len()
                    ),
                    theme.root(),
                ),
                Span::raw(crate::words::result_words(
                    runs,
                    analysis,
                    &analysis.results.differences[first],
                )),
            ]));
        }
    }
    let divergences = comparison.divergences();
    let matched = comparison
        .analysis
        .as_ref()
        .map_or(0, |a| a.alignment.matched);
    let verdict = match comparison.first_divergence() {
        None => {
            let mut spans = rank_spans(app, comparison);
            spans.extend(match verdict_now {
                Some(Verdict::Inconclusive) => [
                    Span::styled("INCONCLUSIVE", theme.only()),
                    Span::raw(format!(
                        "  {matched} launches aligned, every recorded launch wrote the same bits; the traces did not see everything"
                    )),
                ],
                Some(Verdict::Divergent) => [
                    Span::styled("DIVERGENT", theme.root()),
                    Span::raw(match parted_fingerprints(comparison) {
                        // Runs recorded as fingerprints alone.
                        Some(step) if matched == 0 => {
                            format!("  {}", crate::words::fingerprints::where_to_look(step))
                        }
                        _ => format!(
                            "  {matched} launches aligned, every recorded launch wrote the same bits, yet the results differ"
                        ),
                    }),
                ],
                _ => [
                    Span::styled("IDENTICAL", theme.verdict_ok()),
                    Span::raw(format!(
                        "  {matched} launches aligned, every launch wrote the same bits"
                    )),
                ],
            });
            Line::from(spans)
        }
        Some(first) => {
            let at = |i: Option<u32>, seq: &dyn Fn(u32) -> u64, run: &str| {
                i.map_or(format!("{run} -"), |i| format!("{run}#{}", seq(i)))
            };
            let kind = first.kind.as_str();
            let mut spans = rank_spans(app, comparison);
            // Two programs' values parting past their bound come first.
            let past = comparison
                .analysis
                .as_ref()
                .and_then(|a| a.accuracy.as_ref())
                .and_then(|accuracy| accuracy.first_past());
            if let Some(point) = past {
                let kernel = &b.kernel_of(&b.launches[point.b.0 as usize]).name;
                spans.extend([
                    Span::styled("DIVERGENT", theme.root()),
                    Span::raw(format!(
                        "  first A#{} B#{} ",
                        runs.seq_a(point.a.0),
                        runs.seq_b(point.b.0)
                    )),
                    Span::styled(kernel.clone(), theme.root()),
                    Span::raw(format!(
                        " accuracy · {} divergence{} · {} root cause{}",
                        divergences.len(),
                        if divergences.len() == 1 { "" } else { "s" },
                        comparison.roots.len() + 1,
                        if comparison.roots.is_empty() { "" } else { "s" },
                    )),
                ]);
                Line::from(spans)
            } else {
                spans.extend([
                    match verdict_now {
                        Some(Verdict::Benign) => Span::styled("BENIGN", theme.benign()),
                        Some(Verdict::Equivalent) => Span::styled("EQUIVALENT", theme.benign()),
                        Some(Verdict::Inconclusive) => Span::styled("INCONCLUSIVE", theme.only()),
                        _ => Span::styled("DIVERGENT", theme.root()),
                    },
                    Span::raw(format!(
                        "  first {}{} {} ",
                        crate::words::step_of(runs, first.a, first.b)
                            .map_or_else(String::new, |s| format!("step {s}, ")),
                        at(first.a, &|i| runs.seq_a(i), "A"),
                        at(first.b, &|i| runs.seq_b(i), "B"),
                    )),
                    Span::styled(runs.kernel(first).name.clone(), theme.root()),
                    Span::raw(format!(
                        " {kind} · {} divergence{} · {} root cause{}",
                        divergences.len(),
                        if divergences.len() == 1 { "" } else { "s" },
                        comparison.roots.len(),
                        if comparison.roots.len() == 1 { "" } else { "s" },
                    )),
                ]);
                if comparison
                    .analysis
                    .as_ref()
                    .is_some_and(|a| !a.alignment.minimal)
                {
                    spans.push(Span::styled("  alignment approximate", theme.only()));
                }
                Line::from(spans)
            }
        }
    };
    lines.push(verdict);
    frame.render_widget(Paragraph::new(lines), area);
}

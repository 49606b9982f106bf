//! The run lines and the verdict line.

use crate::explain::Runs;
use crate::tui::app::App;
use crate::tui::session::Session;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
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
            format!("  ended early: {}", crate::report::early_end_words(end)),
            theme.only(),
        ));
    }
    Line::from(spans)
}

/// Draws the header.
pub fn render(app: &App, session: &Session, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let Some(b) = &session.b else {
        let line = run_line(app, "", &session.a, session.rows().len());
        frame.render_widget(Paragraph::new(line), area);
        return;
    };
    let (na, nb) = session.analysis.as_ref().map_or((0, 0), |a| a.launches);
    let mut lines = vec![
        run_line(app, "A ", &session.a, na),
        run_line(app, "B ", b, nb),
    ];
    let divergences = session.divergences();
    let verdict = match session.first_divergence() {
        None => Line::from(vec![
            Span::styled("IDENTICAL", theme.verdict_ok()),
            Span::raw(format!(
                "  {} launches aligned, every launch wrote the same bits",
                session.analysis.as_ref().map_or(0, |a| a.alignment.matched)
            )),
        ]),
        Some(first) => {
            let runs = Runs { a: &session.a, b };
            let at = |i: Option<u32>, seq: &dyn Fn(u32) -> u64, run: &str| {
                i.map_or(format!("{run} -"), |i| format!("{run}#{}", seq(i)))
            };
            let kind = first.kind.as_str();
            let benign = session
                .analysis
                .as_ref()
                .is_some_and(|a| a.verdict == crate::analysis::Verdict::Benign);
            let mut spans = vec![
                if benign {
                    Span::styled("BENIGN", theme.benign())
                } else {
                    Span::styled("DIVERGENT", theme.root())
                },
                Span::raw(format!(
                    "  first {} {} ",
                    at(first.a, &|i| runs.seq_a(i), "A"),
                    at(first.b, &|i| runs.seq_b(i), "B"),
                )),
                Span::styled(runs.kernel(first).name.clone(), theme.root()),
                Span::raw(format!(
                    " {kind} · {} divergence{} · {} root cause{}",
                    divergences.len(),
                    if divergences.len() == 1 { "" } else { "s" },
                    session.roots.len(),
                    if session.roots.len() == 1 { "" } else { "s" },
                )),
            ];
            if session
                .analysis
                .as_ref()
                .is_some_and(|a| !a.alignment.minimal)
            {
                spans.push(Span::styled("  alignment approximate", theme.only()));
            }
            Line::from(spans)
        }
    };
    lines.push(verdict);
    frame.render_widget(Paragraph::new(lines), area);
}

//! The selected kernel's source, highlighted, with the lines that commonly
//! cause nondeterminism marked in the gutter.

use super::draw::pane_block;
use crate::tui::app::{App, Pane};
use crate::tui::comparison::Comparison;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Draws the source pane.
pub fn render(app: &App, comparison: &Comparison, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let Some((key, source)) = app.current_source() else {
        let block = pane_block(
            app,
            Pane::Source,
            vec![Span::styled(" source ", theme.title())],
        );
        let inner = block.inner(area);
        frame.render_widget(block, area);
        frame.render_widget(
            Paragraph::new("this kernel's source is not in the trace"),
            inner,
        );
        return;
    };
    let highlighted = app.highlights.get(&key);
    let run = if key.0 { "B" } else { "A" };
    let mut title = vec![
        Span::styled(" source ", theme.title()),
        Span::styled(format!("({run}) {} ", source.path), theme.dim()),
    ];
    if highlighted.is_none() {
        title.push(Span::styled("highlighting… ", theme.dim()));
    }
    if code_differs(comparison, app) {
        title.push(Span::styled("B's source differs ", theme.differs()));
    }
    let block = pane_block(app, Pane::Source, title);
    let inner = block.inner(area);
    frame.render_widget(block, area);

    let suspicious = highlighted.map_or(&[][..], |h| &h.suspicious[..]);
    let mut lines = Vec::new();
    if let Some((line, why)) = suspicious.first() {
        let more = suspicious.len() - 1;
        lines.push(Line::styled(
            format!(
                "! line {}: {why}{}",
                line + 1,
                if more > 0 {
                    format!(" (+{more} more marked)")
                } else {
                    String::new()
                }
            ),
            theme.suspicious(),
        ));
    }
    let body = usize::from(inner.height).saturating_sub(lines.len());
    let start = app
        .source_scroll
        .unwrap_or_else(|| app.auto_source_scroll(body));
    let gutter = source.text.lines().count().to_string().len();
    for (n, text) in source.text.lines().enumerate().skip(start).take(body) {
        let mark = if suspicious.iter().any(|(l, _)| *l == n) {
            Span::styled("!", theme.suspicious())
        } else {
            Span::raw(" ")
        };
        let mut spans = vec![
            Span::styled(format!("{:>gutter$} ", n + 1), theme.dim()),
            mark,
            Span::raw(" "),
        ];
        match highlighted.and_then(|h| h.lines.get(n)) {
            Some(line) => spans.extend(line.spans.iter().cloned()),
            None => spans.push(Span::raw(text.to_owned())),
        }
        lines.push(Line::from(spans));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The selected pair runs different source in A and B.
fn code_differs(comparison: &Comparison, app: &App) -> bool {
    comparison
        .divergence_at(app.selected)
        .and_then(|(_, d)| d.diff.as_ref())
        .is_some_and(|diff| diff.source)
}

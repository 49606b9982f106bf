//! The rank picker: every rank of two runs of several ranks, its verdict
//! and first divergence; Enter opens the highlighted rank.

use super::draw::{fit, list_overlay};
use crate::tui::app::App;
use crate::tui::comparison::Comparison;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Draws the overlay.
pub fn render(app: &App, comparison: &Comparison, frame: &mut Frame, area: Rect) {
    let (Some(selected), Some(place)) = (app.rank_picker, &comparison.rank) else {
        return;
    };
    let theme = &app.theme;
    let set = &place.set;
    let rows = usize::from(area.height.saturating_sub(6)).max(1);
    let (inner, header) = list_overlay(
        app,
        frame,
        area,
        (110, rows.min(set.ranks.len()) as u16 + 3),
        ("ranks", "↑↓ choose · Enter open · Esc close"),
        "  rank    verdict    first divergence       (✗ the earliest cause across ranks)",
    );
    let width = inner.width as usize;
    let mut lines = vec![header];
    // Scrolled so the highlighted rank stays in view.
    let shown = usize::from(inner.height.saturating_sub(1)).max(1);
    let first = selected.saturating_sub(shown.saturating_sub(1));
    for (i, entry) in set.ranks.iter().enumerate().skip(first).take(shown) {
        let mark = if entry.rank == place.rank { "•" } else { " " };
        let cause = if set.earliest_cause == Some(entry.rank) {
            '✗'
        } else {
            ' '
        };
        let text = format!("{mark} {:<5} {cause} {}", entry.rank, entry.summary);
        let style = if i == selected {
            theme.selected()
        } else if entry.agree {
            theme.dim()
        } else {
            theme.text()
        };
        lines.push(Line::from(Span::styled(fit(&text, width), style)));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

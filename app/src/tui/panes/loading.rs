//! The loading screen, with progress per file.

use super::draw::{centered, fit};
use crate::tui::app::App;
use crate::tui::load::Progress;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Draws the loading screen.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let box_area = centered(area, 72, 6);
    let width = usize::from(box_area.width);
    let mut lines = vec![
        Line::styled("tritontui · loading", theme.title()),
        Line::raw(""),
    ];
    for progress in app.progress.iter().flatten() {
        if let Progress::Reading {
            name, done, total, ..
        } = progress
        {
            let fraction = if *total == 0 {
                1.0
            } else {
                *done as f64 / *total as f64
            };
            let bar_width = 20;
            let filled = ((fraction * bar_width as f64).round() as usize).min(bar_width);
            lines.push(Line::from(vec![
                Span::styled("█".repeat(filled), theme.title()),
                Span::styled("░".repeat(bar_width - filled), theme.dim()),
                Span::raw(format!(" {:>3.0}%  ", fraction * 100.0)),
                Span::raw(fit(name, width.saturating_sub(bar_width + 8))),
            ]));
        }
    }
    if let Some((done, total)) = app.ranks_progress {
        lines.push(Line::raw(format!(
            "comparing the runs rank by rank: {done} of {total} ranks"
        )));
    }
    if app.analysing {
        lines.push(Line::raw("aligning the runs and classifying divergences…"));
    }
    frame.render_widget(Paragraph::new(lines), box_area);
}

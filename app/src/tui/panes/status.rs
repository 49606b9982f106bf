//! The status line: the last message, or the keys of the focused pane.

use crate::tui::app::{App, Pane};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Draws the status line.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let focus = match app.focus {
        Pane::List => "list",
        Pane::Detail => "detail",
        Pane::Source => "source",
    };
    let right = format!(" [{focus}]");
    let spans = match &app.message {
        Some(message) => vec![Span::raw(message.clone())],
        None => {
            let keys = [
                ("j/k", "move"),
                ("n/N", "divergence"),
                ("r", "root"),
                ("p", "producer"),
                ("/", "search"),
                ("s", "source"),
                ("Tab", "pane"),
                ("?", "help"),
                ("q", "quit"),
            ];
            keys.iter()
                .flat_map(|(k, what)| {
                    [
                        Span::styled(*k, theme.key()),
                        Span::raw(format!(" {what}  ")),
                    ]
                })
                .collect()
        }
    };
    let width = usize::from(area.width).saturating_sub(right.len());
    let mut line = Line::from(spans);
    // Cut the left part so the focus marker always shows.
    let text: String = line.to_string();
    if text.chars().count() > width {
        line = Line::raw(super::draw::fit(&text, width));
    }
    let pad = width.saturating_sub(line.width());
    line.spans.push(Span::raw(" ".repeat(pad)));
    line.spans.push(Span::styled(right, theme.dim()));
    frame.render_widget(Paragraph::new(line), area);
}

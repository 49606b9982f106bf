//! The attach list: recorded processes a debugger can be attached to.

use super::draw::{fit, list_overlay};
use crate::attach::Alive;
use crate::tui::app::App;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Draws the overlay.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let Some((targets, selected)) = &app.attach else {
        return;
    };
    let theme = &app.theme;
    let (inner, header) = list_overlay(
        app,
        frame,
        area,
        (100, targets.len().max(1) as u16 + 3),
        ("attach a debugger", "↑↓ choose · Enter attach · Esc close"),
        "run  pid      role            host             state",
    );
    let width = inner.width as usize;
    let mut lines = vec![header];
    if targets.is_empty() {
        lines.push(Line::from("the trace lists no processes"));
    }
    for (i, t) in targets.iter().enumerate() {
        let text = format!(
            "{:<4} {:<8} {:<15} {:<16} {}",
            t.run,
            t.pid,
            t.role,
            t.host,
            t.state()
        );
        let style = if i == *selected {
            theme.selected()
        } else if t.alive == Alive::Yes {
            theme.text()
        } else {
            theme.dim()
        };
        lines.push(Line::from(Span::styled(fit(&text, width), style)));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

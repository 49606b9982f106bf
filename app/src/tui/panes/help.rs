//! The key help overlay, listed from the key table (`tui::keys`).

use super::draw::centered;
use crate::tui::app::App;
use crate::tui::keys::{BINDINGS, GLYPHS, name};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// Draws the overlay.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let mut rows: Vec<(String, &str)> = BINDINGS
        .iter()
        .map(|b| {
            let keys: Vec<String> = b.keys.iter().map(|&k| name(k)).collect();
            (keys.join(" "), b.help)
        })
        .collect();
    rows.push(("mouse".to_owned(), "wheel scrolls, click selects"));
    rows.push((String::new(), ""));
    rows.extend(GLYPHS.iter().map(|&(glyph, what)| (glyph.to_owned(), what)));
    let box_area = centered(area, 68, rows.len() as u16 + 2);
    frame.render_widget(Clear, box_area);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(theme.focused_border())
        .title(Span::styled(" keys ", theme.title()))
        .title_bottom(Span::styled(" ? or Esc closes ", theme.dim()));
    let inner = block.inner(box_area);
    frame.render_widget(block, box_area);
    let lines: Vec<Line> = rows
        .into_iter()
        .map(|(keys, what)| {
            Line::from(vec![
                Span::styled(format!("{keys:>18}  "), theme.key()),
                Span::raw(what),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

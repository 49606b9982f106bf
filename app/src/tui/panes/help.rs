//! The key help overlay.

use super::centered;
use crate::tui::app::App;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// Every key, for the overlay and the README.
pub const KEYS: [(&str, &str); 20] = [
    ("j k ↑ ↓", "move (the focused pane)"),
    ("PgUp PgDn Space", "move a page"),
    ("g G Home End", "first / last"),
    ("n N", "next / previous divergence"),
    ("r", "next root cause"),
    ("f", "first divergence"),
    ("p", "jump to the producer of the divergent input"),
    ("Tab", "next pane: list, detail, source"),
    ("s", "show / hide the source"),
    ("/", "search kernels (fuzzy); Enter jumps"),
    ("a", "attach a debugger to a recorded process"),
    ("?", "this help"),
    ("q Esc", "quit (Esc closes an overlay first)"),
    ("mouse", "wheel scrolls, click selects"),
    ("", ""),
    ("=", "equal"),
    ("~", "same bits, other source/config/grid"),
    ("✗", "root cause"),
    ("↓", "diverges, reached from a root cause"),
    ("< >", "only in A / only in B"),
];

/// Draws the overlay.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let box_area = centered(area, 64, KEYS.len() as u16 + 2);
    frame.render_widget(Clear, box_area);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(theme.focused_border())
        .title(Span::styled(" keys ", theme.title()))
        .title_bottom(Span::styled(" ? or Esc closes ", theme.dim()));
    let inner = block.inner(box_area);
    frame.render_widget(block, box_area);
    let lines: Vec<Line> = KEYS
        .iter()
        .map(|(keys, what)| {
            Line::from(vec![
                Span::styled(format!("{keys:>16}  "), theme.key()),
                Span::raw(*what),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

//! The kernel search box, drawn over the main screen.

use super::draw::{centered, fit};
use crate::tui::app::App;
use crate::tui::comparison::Comparison;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// Draws the search box.
pub fn render(app: &App, comparison: &Comparison, frame: &mut Frame, area: Rect) {
    let Some(search) = &app.search else { return };
    let theme = &app.theme;
    let box_area = centered(
        area,
        70.min(area.width.saturating_sub(2)),
        16.min(area.height.saturating_sub(2)),
    );
    frame.render_widget(Clear, box_area);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(theme.focused_border())
        .title(Span::styled(" search kernels ", theme.title()))
        .title_bottom(Line::from(vec![
            Span::styled(" Enter", theme.key()),
            Span::raw(" jump  "),
            Span::styled("↑/↓", theme.key()),
            Span::raw(" choose  "),
            Span::styled("Esc", theme.key()),
            Span::raw(" cancel "),
        ]));
    let inner = block.inner(box_area);
    frame.render_widget(block, box_area);
    let width = usize::from(inner.width);
    let mut lines = vec![
        Line::from(vec![
            Span::styled("/ ", theme.key()),
            Span::raw(search.query.clone()),
            Span::styled("█", theme.dim()),
        ]),
        Line::styled(
            format!(
                "{} of {} kernels",
                search.matches.len(),
                comparison.names.len()
            ),
            theme.dim(),
        ),
    ];
    let room = usize::from(inner.height).saturating_sub(lines.len());
    let skip = search.selected.saturating_sub(room.saturating_sub(1));
    for (k, &name) in search.matches.iter().enumerate().skip(skip).take(room) {
        let launches = comparison.name_rows[name].len();
        let label = format!("{}  ({launches})", comparison.names[name]);
        let mut line = Line::raw(fit(&label, width));
        if k == search.selected {
            line = line.patch_style(theme.selected());
        }
        lines.push(line);
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

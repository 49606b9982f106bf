//! What the panes draw with: text fitted to a width, a pane's frame,
//! boxes centred over the screen, list overlays, grids in words.

use crate::tui::app::{App, Pane};
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders};

/// `text` cut or padded to exactly `width` characters; a cut ends in `…`.
pub fn fit(text: &str, width: usize) -> String {
    let count = text.chars().count();
    if count <= width {
        format!("{text:<width$}")
    } else if width == 0 {
        String::new()
    } else {
        let mut cut: String = text.chars().take(width - 1).collect();
        cut.push('…');
        cut
    }
}

/// Like [`fit`], right-aligned.
pub fn fit_right(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        format!("{text:>width$}")
    } else {
        fit(text, width)
    }
}

/// A pane's frame: a top rule with its title, highlighted when focused.
pub fn pane_block<'a>(app: &App, pane: Pane, title: Vec<Span<'a>>) -> Block<'a> {
    let style = if app.focus == pane {
        app.theme.focused_border()
    } else {
        app.theme.border()
    };
    Block::new()
        .borders(Borders::TOP)
        .border_style(style)
        .title(ratatui::text::Line::from(title))
}

/// A rectangle of at most `width` × `height` centred in `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// Draws a list overlay: a cleared box of `width` × `height` in the middle
/// of `area`, titled `title`, its keys at the bottom. Returns the box's
/// inner area and the list's first line, `columns` dimmed to fit.
pub fn list_overlay(
    app: &App,
    frame: &mut ratatui::Frame,
    area: Rect,
    (width, height): (u16, u16),
    (title, keys): (&str, &str),
    columns: &str,
) -> (Rect, ratatui::text::Line<'static>) {
    let theme = &app.theme;
    let box_area = centered(area, width, height);
    frame.render_widget(ratatui::widgets::Clear, box_area);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(theme.focused_border())
        .title(Span::styled(format!(" {title} "), theme.title()))
        .title_bottom(Span::styled(format!(" {keys} "), theme.dim()));
    let inner = block.inner(box_area);
    frame.render_widget(block, box_area);
    let header = Span::styled(fit(columns, inner.width as usize), theme.dim());
    (inner, ratatui::text::Line::from(header))
}

/// A grid without trailing 1s: `[4096, 1, 1]` → `4096`, `[64, 32, 1]` → `64,32`.
pub fn grid_words(grid: &[u64]) -> String {
    let mut dims = grid.to_vec();
    while dims.len() > 1 && dims.last() == Some(&1) {
        dims.pop();
    }
    dims.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

//! Where each pane goes, as a pure function of the terminal size and the
//! view state, so drawing and mouse handling agree.

use ratatui::layout::{Constraint, Layout, Rect};

/// Rectangles of the main screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    /// Run and verdict lines.
    pub header: Rect,
    /// The side-by-side launch list, title and column heads included.
    pub list: Rect,
    /// The detail pane, if shown.
    pub detail: Option<Rect>,
    /// The source pane, if shown.
    pub source: Option<Rect>,
    /// The status line.
    pub status: Rect,
}

/// Header height for one trace and for two (with `notes` lines more: the
/// runs' settings when they differ, what the traces did not see, results
/// that differ).
pub fn header_height(pair: bool, notes: u16) -> u16 {
    if pair { 3 + notes } else { 1 }
}

/// Terminals at least this wide show detail and source side by side.
const WIDE: u16 = 140;

/// Lays out the screen.
pub fn areas(size: Rect, pair: bool, notes: u16, show_source: bool) -> Areas {
    let [header, body, status] = Layout::vertical([
        Constraint::Length(header_height(pair, notes)),
        Constraint::Min(4),
        Constraint::Length(1),
    ])
    .areas(size);
    let [list, bottom] =
        Layout::vertical([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(body);
    let (detail, source) = match (show_source, size.width >= WIDE) {
        (false, _) => (Some(bottom), None),
        (true, true) => {
            let [d, s] =
                Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                    .areas(bottom);
            (Some(d), Some(s))
        }
        (true, false) => (None, Some(bottom)),
    };
    Areas {
        header,
        list,
        detail,
        source,
        status,
    }
}

/// Rows of launches visible in the list area (a title line and a column
/// header line come first).
pub fn list_rows(list: Rect) -> usize {
    usize::from(list.height.saturating_sub(2))
}

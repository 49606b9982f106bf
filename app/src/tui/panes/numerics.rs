//! The numerics of two programs (`Analysis::accuracy`): every aligned
//! point, its error beside its bound as a bar on a log scale, the first
//! past its bound marked; Enter opens run B's launch that wrote it.

use super::draw::{fit, list_overlay};
use crate::tui::app::App;
use crate::tui::comparison::Comparison;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use tritontui_engine::accuracy::AlignedPoint;
use tritontui_trace::{ArgIndex, Trace};

/// Characters of the error bar: 1e-12 to 1, two a decade.
const BAR: usize = 24;
/// Characters of the module column.
const MODULE: usize = 16;

/// Draws the overlay.
pub fn render(app: &App, comparison: &Comparison, frame: &mut Frame, area: Rect) {
    let Some(selected) = app.numerics else {
        return;
    };
    let Some(accuracy) = comparison
        .analysis
        .as_ref()
        .and_then(|a| a.accuracy.as_ref())
    else {
        return;
    };
    let Some(b) = &comparison.b else {
        return;
    };
    let theme = &app.theme;
    let points = &accuracy.aligned;
    let rows = usize::from(area.height.saturating_sub(6)).max(1);
    let (inner, header) = list_overlay(
        app,
        frame,
        area,
        (167, rows.min(points.len()) as u16 + 3),
        (
            "numerics: aligned points",
            "↑↓ choose · Enter open B's launch · Esc close",
        ),
        &format!(
            "  {:<9} {:<9} {:<MODULE$} {:<44} {:>8} {:>8}  {:<BAR$}  (✗ first past its bound, ! a suspect past it, ~ drawn from other random numbers: not judged)",
            "A", "B", "module", "B's kernel (argument) / result", "error", "bound", "1e-12 … 1"
        ),
    );
    let width = inner.width as usize;
    let mut lines = vec![header];
    let shown = usize::from(inner.height.saturating_sub(1)).max(1);
    let first = selected.saturating_sub(shown.saturating_sub(1));
    for (i, p) in points.iter().enumerate().skip(first).take(shown) {
        let mark = if accuracy.first_past == Some(i) {
            '✗'
        } else if p.past_bound() {
            '!'
        } else if p.drawn_apart {
            '~'
        } else {
            ' '
        };
        let seq = |trace: &Trace, launch: u32| trace.launches[launch as usize].seq;
        let kernel = b.kernel_of(&b.launches[p.b.0 as usize]);
        let what = match &p.result {
            Some(name) => format!("result {name}"),
            None => format!("{} ({})", kernel.name, kernel.arg_name(usize::from(p.b.1))),
        };
        let text = format!(
            "{mark} A#{:<7} B#{:<7} {:<MODULE$} {:<44} {:>8.1e} {:>8.1e}  {}",
            seq(&comparison.a, p.a.0),
            seq(b, p.b.0),
            fit(&module_of(&comparison.a, b, p), MODULE),
            fit(&what, 44),
            p.error.relative,
            p.bound,
            bar(p)
        );
        let style = if i == selected {
            theme.selected()
        } else if p.past_bound() {
            theme.root()
        } else {
            theme.text()
        };
        lines.push(Line::from(Span::styled(fit(&text, width), style)));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The module whose op wrote a point (A's where its trace says, else
/// B's): `(outermost)` for the root, empty where neither says.
fn module_of(a: &Trace, b: &Trace, p: &AlignedPoint) -> String {
    let writer = |trace: &Trace, (launch, arg): (u32, ArgIndex)| {
        let kernel = trace.kernel_of(&trace.launches[launch as usize]);
        let name = kernel.arg_name(usize::from(arg));
        trace
            .modules_of(launch as usize, &name)
            .last()
            .map(|m| (*m).to_owned())
    };
    match writer(a, p.a).or_else(|| writer(b, p.b)) {
        Some(m) if m.is_empty() => "(outermost)".to_owned(),
        Some(m) => m,
        None => String::new(),
    }
}

/// The error as a bar on a log scale from 1e-12 to 1, the bound's place
/// marked `|`.
fn bar(p: &AlignedPoint) -> String {
    let place = |value: f64| -> usize {
        if value.is_nan() || value <= 0.0 {
            return 0;
        }
        let decades = (value.log10().clamp(-12.0, 0.0) + 12.0) / 12.0;
        ((decades * BAR as f64).round() as usize).min(BAR)
    };
    let (filled, bound) = (place(p.error.relative), place(p.bound));
    (0..BAR)
        .map(|k| match (k < filled, k + 1 == bound.max(1)) {
            (_, true) => '|',
            (true, false) => '█',
            (false, false) => '·',
        })
        .collect()
}

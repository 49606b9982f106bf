//! The side-by-side launch list. Only the visible rows are built, so a
//! million launches draw as fast as ten.

use super::draw::{fit, fit_right, grid_words, pane_block};
use crate::tui::app::{App, Pane};
use crate::tui::comparison::Comparison;
use crate::tui::layout::list_rows;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use tritontui_engine::align::Row;
use tritontui_engine::analysis::RowStatus;
use tritontui_trace::Trace;

/// The glyph and style of a row's status.
pub fn glyph(app: &App, comparison: &Comparison, row: usize) -> (&'static str, Style) {
    let theme = &app.theme;
    if !comparison.is_pair() {
        return (" ", theme.text());
    }
    match comparison.status(row) {
        RowStatus::Equal => ("=", theme.equal()),
        RowStatus::Benign => ("~", theme.benign()),
        RowStatus::Divergent(_) => match (comparison.rows()[row], comparison.divergence_at(row)) {
            (Row::OnlyA(_), _) => ("<", theme.only()),
            (Row::OnlyB(_), _) => (">", theme.only()),
            (_, Some((_, d))) if d.absorbed => ("≈", theme.benign()),
            (_, Some((_, d))) if d.is_root_cause() => ("✗", theme.root()),
            _ => ("↓", theme.propagated()),
        },
    }
}

struct Columns {
    index: usize,
    /// The training step a launch ran in (0 wide when no run says).
    step: usize,
    /// The CUDA graph replay a launch ran in (0 wide when no run has one).
    replay: usize,
    name: usize,
    grid: usize,
}

/// Where a launch ran when it ran in a CUDA graph replay: `g2 r13`.
fn replay_cell(trace: &Trace, launch: &tritontui_trace::Launch) -> String {
    trace
        .replay_of(launch)
        .map_or_else(String::new, |r| format!("g{} r{}", r.graph, r.n))
}

/// The widest replay cell of a trace (its last replays have the largest
/// numbers; graph ids grow too).
fn replay_width(trace: &Trace) -> usize {
    trace
        .replays
        .iter()
        .map(|r| format!("g{} r{}", r.graph, r.n).len())
        .max()
        .unwrap_or(0)
}

/// The widest step cell of a trace (0 when it records no steps).
fn step_width(trace: &Trace) -> usize {
    trace
        .steps
        .records
        .last()
        .map_or(0, |last| (last.step + 1).to_string().len())
}

fn columns(side: usize, comparison: &Comparison) -> Columns {
    let max_seq = comparison.a.launches.last().map_or(0, |l| l.seq).max(
        comparison
            .b
            .as_ref()
            .and_then(|b| b.launches.last())
            .map_or(0, |l| l.seq),
    );
    let index = max_seq.to_string().len() + 1;
    let grid = if side >= 40 { 11 } else { 7 };
    let replays = replay_width(&comparison.a).max(comparison.b.as_ref().map_or(0, replay_width));
    // Its header is `replay`; with its space before it.
    let replay = if replays > 0 { replays.max(6) + 1 } else { 0 };
    let steps = step_width(&comparison.a).max(comparison.b.as_ref().map_or(0, step_width));
    // Its header is `step`; with its space before it.
    let step = if steps > 0 { steps.max(4) + 1 } else { 0 };
    Columns {
        index,
        step,
        replay,
        grid,
        name: side.saturating_sub(index + step + replay + grid + 2),
    }
}

fn side_spans(
    trace: &Trace,
    launch: Option<u32>,
    cols: &Columns,
    style: Style,
    theme_dim: Style,
) -> Vec<Span<'static>> {
    match launch {
        None => vec![Span::raw(" ".repeat(
            cols.index + cols.step + cols.replay + cols.name + cols.grid + 2,
        ))],
        Some(i) => {
            let l = &trace.launches[i as usize];
            vec![
                Span::styled(fit_right(&format!("#{}", l.seq), cols.index), theme_dim),
                Span::styled(
                    fit_right(
                        &trace
                            .steps
                            .of(i as usize)
                            .map_or_else(String::new, |s| s.to_string()),
                        cols.step,
                    ),
                    theme_dim,
                ),
                Span::styled(fit_right(&replay_cell(trace, l), cols.replay), theme_dim),
                Span::raw(" "),
                Span::styled(fit(&trace.kernel_of(l).name, cols.name), style),
                Span::raw(" "),
                Span::styled(fit_right(&grid_words(l.grid()), cols.grid), theme_dim),
            ]
        }
    }
}

/// Draws the list.
pub fn render(app: &App, comparison: &Comparison, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let rows = comparison.rows();
    let title = vec![
        Span::styled(" launches ", theme.title()),
        Span::styled(
            format!("{}/{} ", (app.selected + 1).min(rows.len()), rows.len()),
            theme.dim(),
        ),
    ];
    let block = pane_block(app, Pane::List, title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let pair = comparison.is_pair();
    let side = if pair {
        width.saturating_sub(3) / 2
    } else {
        width
    };
    let cols = columns(side, comparison);
    let head_side = |run: &str| {
        format!(
            "{}{}{} {} {}",
            fit_right(run, cols.index),
            fit_right(if cols.step > 0 { "step" } else { "" }, cols.step),
            fit_right(if cols.replay > 0 { "replay" } else { "" }, cols.replay),
            fit("kernel", cols.name),
            fit_right("grid", cols.grid)
        )
    };
    let mut lines = vec![Line::styled(
        if pair {
            format!("{} │ {}", head_side("A"), head_side("B"))
        } else {
            head_side("#")
        },
        theme.dim(),
    )];
    let visible = list_rows(area);
    for (r, &row) in rows.iter().enumerate().skip(app.offset).take(visible) {
        let (glyph, glyph_style) = glyph(app, comparison, r);
        let name_style = match comparison.status(r) {
            RowStatus::Divergent(_) => glyph_style,
            _ => theme.text(),
        };
        let mut spans = side_spans(&comparison.a, row.a(), &cols, name_style, theme.dim());
        if let Some(b) = &comparison.b {
            spans.push(Span::styled(format!(" {glyph} "), glyph_style));
            spans.extend(side_spans(b, row.b(), &cols, name_style, theme.dim()));
        }
        let mut line = Line::from(spans);
        if r == app.selected {
            line = line.patch_style(theme.selected());
        }
        lines.push(line);
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

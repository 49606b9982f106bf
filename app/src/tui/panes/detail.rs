//! The selected launch: verdict in words, producers of divergent inputs,
//! grid and config, and every argument side by side with the cells that
//! differ highlighted.

use super::draw::{fit, grid_words, pane_block};
use crate::tui::app::{App, Pane};
use crate::tui::comparison::Comparison;
use crate::values::{HeatMap, TensorValues};
use crate::words::{differ, divergence_words, origin_words};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use std::collections::BTreeMap;
use tritontui_engine::TracePair;
use tritontui_engine::align::Row;
use tritontui_engine::analysis::{Divergence, RowStatus};
use tritontui_trace::{ArgRef, Kernel, Launch, Scalar, Trace};

/// One side of a row: its trace and launch.
type Side<'t> = Option<(&'t Trace, &'t Launch)>;

fn side(trace: Option<&Trace>, index: Option<u32>) -> Side<'_> {
    let trace = trace?;
    Some((trace, &trace.launches[index? as usize]))
}

/// Draws the detail pane.
pub fn render(app: &App, comparison: &Comparison, frame: &mut Frame, area: Rect) {
    let theme = &app.theme;
    let block = pane_block(
        app,
        Pane::Detail,
        vec![Span::styled(" detail ", theme.title())],
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(&row) = comparison.rows().get(app.selected) else {
        return;
    };
    let a = side(Some(&comparison.a), row.a());
    let b = side(comparison.b.as_ref(), row.b());
    let mut lines = Vec::new();
    let (trace, launch) = match (a, b) {
        (Some(x), _) | (None, Some(x)) => x,
        (None, None) => return,
    };
    let kernel = trace.kernel_of(launch);
    let at =
        |s: Side<'_>, run: &str| s.map_or(format!("{run} -"), |(_, l)| format!("{run}#{}", l.seq));
    let mut title = vec![Span::styled(kernel.name.clone(), theme.title())];
    if comparison.is_pair() {
        title.push(Span::styled(
            format!("  {}  {}", at(a, "A"), at(b, "B")),
            theme.dim(),
        ));
    } else {
        title.push(Span::styled(format!("  #{}", launch.seq), theme.dim()));
    }
    title.push(Span::styled(format!("  {}", kernel.backend), theme.dim()));
    lines.push(Line::from(title));
    if comparison.is_pair() {
        verdict_lines(app, comparison, row, &mut lines);
    }
    argument_lines(
        app,
        a,
        b,
        comparison.is_pair(),
        usize::from(inner.width),
        &mut lines,
    );
    launch_lines(app, a, b, comparison.is_pair(), &mut lines);
    if let (Some((_, la)), Some((_, lb))) = (a, b)
        && let Some(values) = comparison.captured_values(la.seq, lb.seq)
    {
        value_lines(app, &values, &mut lines);
    }
    let paragraph = Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((u16::try_from(app.detail_scroll).unwrap_or(u16::MAX), 0));
    frame.render_widget(paragraph, inner);
}

fn verdict_lines(app: &App, comparison: &Comparison, row: Row, lines: &mut Vec<Line<'static>>) {
    let theme = &app.theme;
    let Some(b) = &comparison.b else { return };
    let runs = TracePair {
        a: &comparison.a,
        b,
    };
    let Some(analysis) = &comparison.analysis else {
        return;
    };
    let status = comparison.status(app.selected);
    let (glyph, style) = super::launches::glyph(app, comparison, app.selected);
    let head = match (status, comparison.divergence_at(app.selected)) {
        (RowStatus::Equal, _) => "equal: every recorded hash agrees".to_owned(),
        (RowStatus::Benign, _) => benign_words(comparison, row),
        (_, Some((index, d))) => divergence_head(runs, analysis, index, d),
        _ => String::new(),
    };
    lines.push(Line::from(vec![
        Span::styled(format!("{glyph} "), style),
        Span::styled(head, style),
    ]));
    let Some((_, d)) = comparison.divergence_at(app.selected) else {
        return;
    };
    if d.origins.is_empty() {
        lines.push(Line::raw(divergence_words(runs, analysis, d)));
    } else {
        let names: Vec<String> = d.args.iter().map(|&arg| runs.arg_name(d, arg)).collect();
        lines.push(Line::raw(format!(
            "{} before the launch:",
            differ(&names.join(", "), names.len())
        )));
    }
    for origin in &d.origins {
        let name = runs.arg_name(d, origin.arg);
        let jump = if matches!(origin.a, tritontui_engine::producer::Origin::Launch(..))
            || matches!(origin.b, tritontui_engine::producer::Origin::Launch(..))
        {
            "  (p: jump there)"
        } else {
            ""
        };
        lines.push(Line::from(vec![
            Span::styled(format!("  {name} ← "), theme.key()),
            Span::raw(origin_words(runs, d, origin, analysis)),
            Span::styled(jump, theme.dim()),
        ]));
    }
}

fn divergence_head(
    runs: TracePair<'_>,
    analysis: &tritontui_engine::Analysis,
    index: usize,
    d: &Divergence,
) -> String {
    let mut head = d.kind.as_str().to_owned();
    if d.is_root_cause() || d.absorbed {
        head.push_str(if d.absorbed { "" } else { " · root cause" });
        head.push_str(" · ");
        head.push_str(&crate::words::impact_words(runs, analysis, index));
        return head;
    }
    match d.reached_from {
        None => {}
        Some((up, _)) => {
            let root = analysis.divergences[up].root;
            let at = |d: &Divergence| {
                let a =
                    d.a.map_or("A -".to_owned(), |i| format!("A#{}", runs.seq_a(i)));
                let b =
                    d.b.map_or("B -".to_owned(), |i| format!("B#{}", runs.seq_b(i)));
                format!("{a} {b} {}", runs.kernel(d).name)
            };
            if root == up {
                head.push_str(&format!(
                    " · reached from the root cause {}",
                    at(&analysis.divergences[up])
                ));
            } else {
                head.push_str(&format!(
                    " · reached from {} · root cause {}",
                    at(&analysis.divergences[up]),
                    at(&analysis.divergences[root])
                ));
            }
        }
    }
    head
}

fn benign_words(comparison: &Comparison, row: Row) -> String {
    let (Some(ia), Some(ib), Some(b)) = (row.a(), row.b(), &comparison.b) else {
        return String::new();
    };
    let diff = tritontui_engine::compare::Comparer::new(&comparison.a, b).compare(ia, ib);
    let mut what = Vec::new();
    if diff.source {
        what.push("source");
    }
    if diff.config {
        what.push("config");
    }
    if diff.grid {
        what.push("grid");
    }
    if !diff.layout.is_empty() {
        what.push("strides");
    }
    if !diff.overwritten.is_empty() {
        let kernel = comparison.a.kernel_of(&comparison.a.launches[ia as usize]);
        let names: Vec<String> = diff
            .overwritten
            .iter()
            .map(|&i| kernel.arg_name(usize::from(i)))
            .collect();
        let old = format!(
            "old bytes of {} differed but were overwritten",
            names.join(", ")
        );
        return if what.is_empty() {
            format!("same bits after the launch: the {old}")
        } else {
            format!(
                "same bits, although the {} differ; the {old}",
                what.join(", ")
            )
        };
    }
    format!("same bits, although the {} differ", what.join(", "))
}

fn config_words(config: &BTreeMap<String, Scalar>) -> Vec<(String, String)> {
    config
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string()))
        .collect()
}

/// The launch's captured values in both runs: per tensor that differs,
/// the metrics and a heat map of where.
fn value_lines(
    app: &App,
    values: &Result<Vec<TensorValues>, String>,
    lines: &mut Vec<Line<'static>>,
) {
    let theme = &app.theme;
    let label = Span::styled(format!("{:<8}", "values"), theme.dim());
    let tensors = match values {
        Ok(tensors) => tensors,
        Err(why) => {
            lines.push(Line::from(vec![label, Span::raw(why.clone())]));
            return;
        }
    };
    let differing = crate::values::differing_lines(tensors);
    if differing.is_empty() {
        lines.push(Line::from(vec![
            label,
            Span::raw("captured: every tensor holds the same bits in both runs"),
        ]));
        return;
    }
    for (line, tensor) in differing.into_iter().zip(
        tensors
            .iter()
            .filter(|t| t.metrics.as_ref().is_some_and(|m| m.mismatched > 0)),
    ) {
        lines.push(Line::from(vec![
            label.clone(),
            Span::styled(line, theme.differs()),
        ]));
        let Some(metrics) = &tensor.metrics else {
            continue;
        };
        for row in heat_rows(&metrics.heat_map) {
            lines.push(Line::from(vec![
                Span::raw(" ".repeat(8)),
                Span::styled(row, theme.differs()),
            ]));
        }
    }
}

/// A heat map as rows of shade characters, darker where more elements
/// differ (a dot where none does).
fn heat_rows(map: &HeatMap) -> Vec<String> {
    const SHADES: [char; 4] = ['░', '▒', '▓', '█'];
    map.cells
        .chunks(map.cols.max(1) as usize)
        .map(|row| {
            let cells: String = row
                .iter()
                .map(|&f| match f {
                    f if f <= 0.0 => '·',
                    f => SHADES[((f * 4.0).ceil() as usize).clamp(1, 4) - 1],
                })
                .collect();
            format!("│{cells}│")
        })
        .collect()
}

fn launch_lines(app: &App, a: Side<'_>, b: Side<'_>, pair: bool, lines: &mut Vec<Line<'static>>) {
    let theme = &app.theme;
    let grid = |s: Side<'_>| s.map(|(_, l)| grid_words(l.grid()));
    let config = |s: Side<'_>| {
        s.map(|(t, l)| config_words(&t.kernel_of(l).config))
            .unwrap_or_default()
    };
    let words = |c: &[(String, String)]| {
        c.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let label = |text: &str| Span::styled(format!("{text:<8}"), theme.dim());
    let (ga, gb, ca, cb) = (grid(a), grid(b), config(a), config(b));
    let same = !pair || a.is_none() || b.is_none() || (ga == gb && ca == cb);
    if same {
        let (g, c) = if a.is_some() { (ga, ca) } else { (gb, cb) };
        let mut line = vec![
            label("launch"),
            Span::raw(format!("grid {} · {}", g.unwrap_or_default(), words(&c))),
        ];
        if pair && a.is_some() && b.is_some() {
            line.push(Span::styled("  (same in both runs)", theme.dim()));
        }
        lines.push(Line::from(line));
        return;
    }
    let entry = |run: &str,
                 g: Option<String>,
                 own: &[(String, String)],
                 other: &[(String, String)],
                 og: &Option<String>| {
        let g = g.unwrap_or_else(|| "-".into());
        let gstyle = if Some(&g) != og.as_ref() {
            theme.differs()
        } else {
            theme.text()
        };
        let mut spans = vec![
            label(if run == "A" { "launch" } else { "" }),
            Span::raw(format!("{run} ")),
            Span::styled(format!("grid {g} "), gstyle),
        ];
        for (k, v) in own {
            let same = other.iter().any(|(k2, v2)| k2 == k && v2 == v);
            spans.push(Span::styled(
                format!("{k}={v} "),
                if same { theme.text() } else { theme.differs() },
            ));
        }
        Line::from(spans)
    };
    lines.push(entry("A", ga.clone(), &ca, &cb, &gb));
    lines.push(entry("B", gb, &cb, &ca, &ga));
}

/// What one argument looks like on one side.
#[derive(Default)]
struct ArgView {
    name: String,
    io: &'static str,
    dtype: String,
    shape: String,
    stride: String,
    pre: Option<u64>,
    post: Option<u64>,
    scalar: Option<String>,
    stats: Option<tritontui_trace::Stats>,
    /// Its row hashes after the launch (`rows`).
    rows: Option<Vec<u64>>,
    reads: bool,
}

fn arg_views(s: Side<'_>) -> Vec<ArgView> {
    let Some((trace, launch)) = s else {
        return Vec::new();
    };
    let kernel: &Kernel = trace.kernel_of(launch);
    trace
        .args_of(launch)
        .enumerate()
        .map(|(i, arg)| {
            let access = kernel.access_of(i);
            let io = access.as_str();
            let mut view = ArgView {
                name: kernel.arg_name(i),
                io,
                reads: tritontui_engine::compare::reads_values(kernel, i),
                ..ArgView::default()
            };
            match arg {
                ArgRef::Tensor(t) => {
                    view.dtype = t.layout.dtype.clone();
                    view.shape = format!("{:?}", t.layout.shape);
                    view.stride = format!("{:?}", t.layout.stride);
                    view.pre = t.pre;
                    view.post = t.post;
                    view.stats = t.stats;
                    view.rows = t.rows.map(<[u64]>::to_vec);
                }
                ArgRef::Scalar(v) => view.scalar = Some(v.to_string()),
            }
            view
        })
        .collect()
}

fn hash_text(h: Option<u64>, digits: usize) -> String {
    h.map_or("—".to_owned(), |h| {
        let full = format!("{h:016x}");
        full[..digits.min(16)].to_owned()
    })
}

fn argument_lines(
    app: &App,
    a: Side<'_>,
    b: Side<'_>,
    pair: bool,
    width: usize,
    lines: &mut Vec<Line<'static>>,
) {
    let theme = &app.theme;
    let (va, vb) = (arg_views(a), arg_views(b));
    let primary = if va.is_empty() { &vb } else { &va };
    let w = |f: &dyn Fn(&ArgView) -> usize, min: usize| {
        primary.iter().chain(&vb).map(f).max().unwrap_or(0).max(min)
    };
    let name_w = w(&|v| v.name.len(), 4).min(16);
    let dtype_w = w(
        &|v| v.dtype.len().max(v.scalar.as_ref().map_or(0, |_| 6)),
        5,
    )
    .min(14);
    let shape_w = w(&|v| v.shape.len(), 5).min(22);
    let stride_w = w(&|v| v.stride.len(), 6).min(22);
    let hashes = if pair { 4 } else { 2 };
    let fixed = name_w + 6 + dtype_w + shape_w + 4;
    let (digits, show_stride) = [(16, true), (16, false), (8, true), (8, false), (6, false)]
        .into_iter()
        .find(|(d, s)| fixed + hashes * (d + 1) + if *s { stride_w + 1 } else { 0 } <= width)
        .unwrap_or((6, false));
    let hash_w = digits.max(if pair { 8 } else { 6 });
    let mut head = vec![
        Span::styled(fit("arg", name_w + 1), theme.dim()),
        Span::styled(fit("io", 6), theme.dim()),
        Span::styled(fit("dtype", dtype_w + 1), theme.dim()),
        Span::styled(fit("shape", shape_w + 1), theme.dim()),
    ];
    if show_stride {
        head.push(Span::styled(fit("stride", stride_w + 1), theme.dim()));
    }
    let heads: &[&str] = if pair {
        &["A before", "A after", "B before", "B after"]
    } else {
        &["before", "after"]
    };
    for h in heads {
        head.push(Span::styled(fit(h, hash_w + 1), theme.dim()));
    }
    lines.push(Line::from(head));
    let count = va.len().max(vb.len());
    let empty = ArgView::default();
    for i in 0..count {
        let x = va.get(i).or(vb.get(i)).unwrap_or(&empty);
        let y = vb.get(i);
        let differs = |p: bool| if p { theme.differs() } else { theme.text() };
        let layout_differs =
            y.is_some_and(|y| pair && !va.is_empty() && (x.dtype != y.dtype || x.shape != y.shape));
        let mut spans = vec![
            Span::styled(fit(&x.name, name_w + 1), theme.key()),
            Span::styled(fit(x.io, 6), theme.dim()),
        ];
        if let Some(value) = &x.scalar {
            let other = y.and_then(|y| y.scalar.clone());
            let style = differs(pair && other.as_ref().is_some_and(|o| o != value));
            let text = match (&other, pair) {
                (Some(o), true) if o != value => format!("{value}  (B: {o})"),
                _ => value.clone(),
            };
            spans.push(Span::styled(text, style));
            lines.push(Line::from(spans));
            continue;
        }
        spans.push(Span::styled(
            fit(&x.dtype, dtype_w + 1),
            differs(layout_differs),
        ));
        spans.push(Span::styled(
            fit(&x.shape, shape_w + 1),
            differs(layout_differs),
        ));
        if show_stride {
            let stride_differs = y.is_some_and(|y| pair && !va.is_empty() && y.stride != x.stride);
            spans.push(Span::styled(
                fit(&x.stride, stride_w + 1),
                differs(stride_differs),
            ));
        }
        if pair {
            let (pa, qa) = (
                va.get(i).and_then(|v| v.pre),
                va.get(i).and_then(|v| v.post),
            );
            let (pb, qb) = (y.and_then(|v| v.pre), y.and_then(|v| v.post));
            let both = va.get(i).is_some() && y.is_some();
            // A pure output's bytes before the launch are stale and do not count.
            let pre_style = if both && pa != pb {
                if x.reads {
                    theme.differs()
                } else {
                    theme.only()
                }
            } else {
                theme.text()
            };
            let post_style = differs(both && qa != qb);
            spans.push(Span::styled(
                fit(&hash_text(pa, digits), hash_w + 1),
                pre_style,
            ));
            spans.push(Span::styled(
                fit(&hash_text(qa, digits), hash_w + 1),
                post_style,
            ));
            spans.push(Span::styled(
                fit(&hash_text(pb, digits), hash_w + 1),
                pre_style,
            ));
            spans.push(Span::styled(
                fit(&hash_text(qb, digits), hash_w + 1),
                post_style,
            ));
        } else {
            spans.push(Span::raw(fit(&hash_text(x.pre, digits), hash_w + 1)));
            spans.push(Span::raw(fit(&hash_text(x.post, digits), hash_w + 1)));
        }
        lines.push(Line::from(spans));
        let (rows_a, rows_b) = (
            va.get(i).and_then(|v| v.rows.as_deref()),
            y.and_then(|v| v.rows.as_deref()),
        );
        if let Some(differing) =
            tritontui_engine::rows::differing(rows_a, rows_b).filter(|d| pair && !d.is_empty())
        {
            let total = rows_b.map_or(0, <[u64]>::len) as u64;
            let cells = width.saturating_sub(30).clamp(8, 64);
            lines.push(Line::styled(
                format!(
                    "  rows differing: {} of {total}  {}",
                    differing.len(),
                    crate::words::batch::row_strip(total, &differing, cells)
                ),
                theme.differs(),
            ));
        }
        for (run, view) in [("A", va.get(i)), ("B", y)] {
            if let Some(stats) = view.and_then(|v| v.stats) {
                lines.push(Line::styled(
                    format!(
                        "  {run} after: min {:.6e}  max {:.6e}  mean|x| {:.6e}  nan {}  inf {}",
                        stats.min, stats.max, stats.mean_abs, stats.nan, stats.inf
                    ),
                    theme.dim(),
                ));
            }
        }
    }
    if pair {
        lines.push(Line::styled(
            "red: differs between the runs · yellow: stale bytes of a pure output, not read",
            theme.dim(),
        ));
    }
}

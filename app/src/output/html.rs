//! `tritontui report A B -o report.html`: the comparison as one
//! self-contained HTML page (inline styles, no script, nothing fetched):
//! the verdict, the settings and compilations that made the runs
//! different programs, the first divergence, each root cause with its arguments
//! and hashes, the sources of the kernels involved with their suspicious
//! lines marked, and the aligned launch table with runs of equal launches
//! folded away.

use crate::output::report::{DivergenceReport, Report};
use crate::source_language::syntax_name;
use crate::values::{HeatMap, Metrics, TensorValues};
use std::collections::BTreeSet;
use std::fmt::Write;
use syntect::easy::HighlightLines;
use syntect::highlighting::ThemeSet;
use syntect::html::{IncludeBackground, styled_line_to_highlighted_html};
use syntect::parsing::SyntaxSet;
use tritontui_engine::align::Row;
use tritontui_engine::analysis::{Analysis, RowStatus};
use tritontui_engine::suspects::suspicious_lines;
use tritontui_trace::{ArgRef, Launch, Trace};

/// Equal launches in a row that stay on show; longer runs are folded.
const SHOWN_EQUAL: usize = 3;
/// Rows listed inside one folded run at most.
const FOLDED_ROWS: usize = 50;
/// Rows of the launch table at most (a table of a million rows helps no one).
const TABLE_ROWS: usize = 5000;
/// Root causes detailed at most (each looks its launches up).
const ROOT_CAUSES: usize = 100;

/// The page for the comparison of `a` and `b`.
pub fn render(a: &Trace, b: &Trace, analysis: &Analysis, report: &Report) -> String {
    let mut page = String::with_capacity(1 << 16);
    let title = format!("tritontui: {} vs {}", a.path.display(), b.path.display());
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n",
        escape(&title)
    );
    verdict(&mut page, a, b, report);
    programs_differ(&mut page, report);
    if let Some(first) = &report.first_divergence {
        page.push_str("<h2>First divergence</h2>\n");
        divergence(&mut page, a, b, first, false);
    }
    if !report.root_causes.is_empty() {
        let _ = writeln!(page, "<h2>Root causes ({})</h2>", report.root_causes.len());
        for root in report.root_causes.iter().take(ROOT_CAUSES) {
            divergence(&mut page, a, b, root, true);
        }
        if report.root_causes.len() > ROOT_CAUSES {
            let _ = writeln!(
                page,
                "<p>… {} more root causes; <code>tritontui diff --json</code> lists them all.</p>",
                report.root_causes.len() - ROOT_CAUSES
            );
        }
    }
    sources(&mut page, a, b, report);
    launch_table(&mut page, a, b, analysis);
    page.push_str("</body></html>\n");
    page
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}\
h1{font-size:1.5em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}\
.verdict{display:inline-block;padding:.2em .6em;border-radius:4px;font-weight:bold}\
.divergent{background:#fdd;color:#900}.identical{background:#dfd;color:#060}.verdict.benign{background:#def;color:#036}\
.verdict.inconclusive{background:#ffd;color:#750}\
table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;text-align:left;\
font-family:ui-monospace,monospace;font-size:13px;border-bottom:1px solid #eee}\
.diff{background:#fdd}.root{color:#900;font-weight:bold}.reached{color:#a60}\
.only{color:#06c}.benign{color:#777}.card{border:1px solid #ddd;border-radius:6px;\
padding:.6em 1em;margin:.8em 0}pre.src{background:#2b303b;color:#c0c5ce;padding:.6em;\
overflow-x:auto;font-size:12px}.line{display:block;white-space:pre}\
.suspect{background:#5b2c2c}.mark{color:#f66;font-weight:bold}\
.why{color:#f99;font-style:italic}\
details summary{cursor:pointer;color:#555;font-style:italic}";

fn verdict(page: &mut String, a: &Trace, b: &Trace, report: &Report) {
    let verdict = report.verdict.as_str();
    let _ = write!(
        page,
        "<h1>tritontui report</h1>\n<p><span class=\"verdict {verdict}\">{verdict}</span> \
         {} divergence(s), {} root cause(s), {} absorbing launch(es); {} launches in A, {} in B, {} matched.</p>\n",
        report.divergence_count,
        report.root_causes.len(),
        report.absorbed_count,
        report.launches.a,
        report.launches.b,
        report.launches.matched,
    );
    page.push_str("<table><tr><th>run</th><th>trace</th><th>devices</th><th>torch</th><th>triton</th><th>complete</th></tr>\n");
    for (label, trace) in [("A", a), ("B", b)] {
        let h = &trace.header;
        let _ = writeln!(
            page,
            "<tr><td>{label}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&trace.path.display().to_string()),
            escape(&h.devices.join(", ")),
            escape(h.torch.as_deref().unwrap_or("")),
            escape(h.triton.as_deref().unwrap_or("")),
            match (&trace.early_end, trace.raised()) {
                (Some(_), _) => "no (ended early)".to_owned(),
                (None, Some(raised)) => escape(&format!("yes (its program raised {raised})")),
                (None, None) => "yes".to_owned(),
            },
        );
    }
    page.push_str("</table>\n");
    let unseen = crate::words::unseen_work(&report.gaps.a, &report.gaps.b);
    if !unseen.is_empty() {
        page.push_str("<h2>Not seen</h2>\n<ul>\n");
        for line in unseen {
            let _ = writeln!(page, "<li>{}</li>", escape(&line));
        }
        page.push_str("</ul>\n");
    }
    if !report.result_differences.is_empty() {
        let _ = writeln!(
            page,
            "<h2>Results that differ ({} of {})</h2>\n<ul>",
            report.results.differ, report.results.compared
        );
        for r in report.result_differences.iter().take(ROOT_CAUSES) {
            let _ = writeln!(page, "<li>{}</li>", escape(&r.detail));
        }
        page.push_str("</ul>\n");
        if report.result_differences.len() > ROOT_CAUSES {
            let _ = writeln!(
                page,
                "<p>… {} more; <code>tritontui diff --json</code> lists them all.</p>",
                report.result_differences.len() - ROOT_CAUSES
            );
        }
    }
}

/// What made the runs different programs, first when there is any: the
/// settings that differ, and the recompilations and graph breaks one run
/// alone has.
fn programs_differ(page: &mut String, report: &Report) {
    if !report.settings.is_empty() {
        page.push_str(
            "<h2>Settings that differ</h2>\n<table><tr><th>setting</th><th>A</th><th>B</th></tr>\n",
        );
        let side = |v: &Option<String>| escape(v.as_deref().unwrap_or("(unset)"));
        for d in &report.settings {
            let _ = writeln!(
                page,
                "<tr class=\"diff\"><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&d.name),
                side(&d.a),
                side(&d.b)
            );
        }
        page.push_str("</table>\n");
    }
    let programs = crate::words::program_lines(&report.programs);
    if !programs.is_empty() {
        page.push_str("<h2>Different programs</h2>\n<ul>\n");
        for line in &programs {
            let _ = writeln!(page, "<li>{}</li>", escape(line));
        }
        page.push_str("</ul>\n");
    }
    if let Some(fingerprints) = &report.fingerprints {
        page.push_str("<h2>Fingerprints</h2>\n<ul>\n");
        for line in &fingerprints.detail {
            let _ = writeln!(page, "<li>{}</li>", escape(line));
        }
        page.push_str("</ul>\n");
    }
    if let Some(accuracy) = &report.accuracy {
        numerics(page, accuracy);
    }
    if let Some(batch) = &report.batch {
        page.push_str("<h2>One request in two batches (its rows)</h2>\n<ul>\n");
        for line in &batch.detail {
            let _ = writeln!(page, "<li>{}</li>", escape(line));
        }
        page.push_str("</ul>\n");
    }
    if !report.compile_differences.is_empty() {
        page.push_str("<h2>Compiled differently</h2>\n<ul>\n");
        for line in crate::words::compile_lines(&report.compile_differences) {
            let _ = writeln!(page, "<li>{}</li>", escape(&line));
        }
        page.push_str("</ul>\n");
    }
}

/// Two programs' numerics: what they say, and the error at each aligned
/// point beside its bound, through the run (a bar per point on a log
/// scale, the bound a line; a point past it in red).
fn numerics(page: &mut String, accuracy: &super::report::AccuracyReport) {
    page.push_str("<h2>Numerics</h2>\n<ul>\n");
    for line in &accuracy.detail {
        let _ = writeln!(page, "<li>{}</li>", escape(line));
    }
    let _ = writeln!(page, "<li>bound: {}</li>\n</ul>", escape(&accuracy.rule));
    let points = &accuracy.aligned;
    if points.is_empty() {
        return;
    }
    // log10 of the relative error, from 1e-12 (and exact) to 1.
    let (low, high, height, step) = (-12.0f64, 0.0f64, 160.0f64, 3.0f64);
    let y = |value: f64| {
        let log = if value > 0.0 {
            value.log10().clamp(low, high)
        } else {
            low
        };
        height * (high - log) / (high - low)
    };
    let width = step * points.len() as f64;
    let _ = writeln!(
        page,
        "<svg class=\"numerics\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\"><title>relative error of each aligned point (bars) and its bound (line), log scale 1e-12 to 1</title>"
    );
    for (i, p) in points.iter().enumerate() {
        let top = y(p.relative_error);
        let colour = if p.past_bound { "#c0392b" } else { "#2980b9" };
        let _ = writeln!(
            page,
            "<rect x=\"{:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\"><title>A#{} / B#{} {}{}: {:.1e} (bound {:.1e})</title></rect>",
            i as f64 * step,
            step - 0.5,
            height - top,
            p.a_index,
            p.b_index,
            escape(&p.b_kernel),
            module_of(p).map_or(String::new(), |m| format!(" in {}", escape(m))),
            p.relative_error,
            p.bound
        );
    }
    let bound: Vec<String> = points
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{:.1},{:.1}", (i as f64 + 0.5) * step, y(p.bound)))
        .collect();
    let _ = writeln!(
        page,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"#333\" stroke-width=\"1\"/></svg>",
        bound.join(" ")
    );
    by_module(page, points);
}

/// The module whose op wrote a point: run A's where its trace says, else
/// run B's (`(outermost)` for the root).
fn module_of(p: &super::report::PointReport) -> Option<&str> {
    let module = p.a_module.as_deref().or(p.b_module.as_deref())?;
    Some(if module.is_empty() {
        "(outermost)"
    } else {
        module
    })
}

/// The error by layer: for each module (in the order the points first
/// reach it), its points, their largest relative error, and how many are
/// past their bound (relative and absolute).
fn by_module(page: &mut String, points: &[super::report::PointReport]) {
    let mut rows: Vec<(&str, usize, f64, usize)> = Vec::new();
    for p in points {
        let Some(module) = module_of(p) else { continue };
        let past = usize::from(p.past_bound);
        match rows.iter_mut().find(|(m, ..)| *m == module) {
            Some((_, count, largest, pasts)) => {
                *count += 1;
                *pasts += past;
                *largest = largest.max(p.relative_error);
            }
            None => rows.push((module, 1, p.relative_error, past)),
        }
    }
    if rows.is_empty() {
        return;
    }
    page.push_str(
        "<table><tr><th>module</th><th>points</th><th>largest relative error</th><th>past their bound</th></tr>\n",
    );
    for (module, count, largest, past) in rows {
        let _ = writeln!(
            page,
            "<tr><td><code>{}</code></td><td>{count}</td><td>{largest:.1e}</td><td>{past}</td></tr>",
            escape(module),
        );
    }
    page.push_str("</table>\n");
}

fn divergence(page: &mut String, a: &Trace, b: &Trace, d: &DivergenceReport, with_args: bool) {
    let index = |i: Option<u64>| i.map_or_else(|| "–".to_owned(), |i| format!("#{i}"));
    let _ = write!(
        page,
        "<div class=\"card\"><p><b>{}</b> at {}A {} / B {}: <code>{}</code></p><p>{}</p><p>Impact: {}</p>",
        escape(d.kind.as_str()),
        d.step.map_or_else(String::new, |s| format!("step {s}, ")),
        index(d.a_index),
        index(d.b_index),
        escape(&d.kernel),
        escape(&d.detail),
        escape(&d.impact_detail),
    );
    if let Some(origin) = &d.origin {
        let _ = write!(page, "<p>Input origin: {}</p>", escape(origin));
    }
    if with_args {
        let launch_a = d.a_index.and_then(|i| launch_by_seq(a, i));
        let launch_b = d.b_index.and_then(|i| launch_by_seq(b, i));
        if let (Some(la), Some(lb)) = (launch_a, launch_b) {
            arguments(page, a, la, b, lb, &d.args);
        }
    }
    if let Some(tensors) = &d.values {
        values(page, tensors);
    }
    if let Some(error) = &d.values_error {
        let _ = write!(page, "<p>Captured values: {}</p>", escape(error));
    }
    page.push_str("</div>\n");
}

/// The launch's captured values in both runs: a row of metrics per tensor
/// that differs, with a heat map of where.
fn values(page: &mut String, tensors: &[TensorValues]) {
    let differing: Vec<(&TensorValues, &Metrics)> = tensors
        .iter()
        .filter_map(|t| Some((t, t.metrics.as_ref().filter(|m| m.mismatched > 0)?)))
        .collect();
    if differing.is_empty() {
        page.push_str("<p>Captured values: every tensor holds the same bits in both runs.</p>");
        return;
    }
    page.push_str(
        "<table><tr><th>captured</th><th>when</th><th>differ</th><th>max abs</th><th>max rel</th>\
         <th>RMSE</th><th>max ULP</th><th>worst element (A vs B)</th><th>where</th></tr>",
    );
    for (t, m) in differing {
        let worst = m.worst.as_ref().map_or_else(String::new, |w| {
            format!("{:?}: {} vs {}", w.index, w.a, w.b)
        });
        let _ = write!(
            page,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}/{} ({:.2}%)</td><td>{:.3e}</td>\
             <td>{:.3e}</td><td>{:.3e}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&t.name),
            t.when,
            m.mismatched,
            m.elements,
            m.mismatched_percent,
            m.max_abs,
            m.max_rel,
            m.rmse,
            m.max_ulp,
            escape(&worst),
            heat_map_svg(&m.heat_map),
        );
    }
    page.push_str("</table>");
}

/// A heat map as an inline SVG: one square per cell, darker where more of
/// its elements differ.
fn heat_map_svg(map: &HeatMap) -> String {
    const CELL: u32 = 6;
    let mut svg = format!(
        "<svg class=\"heat\" width=\"{}\" height=\"{}\" role=\"img\">\
         <rect width=\"100%\" height=\"100%\" fill=\"#eee\"/>",
        map.cols * CELL,
        map.rows * CELL
    );
    for (i, &fraction) in map.cells.iter().enumerate() {
        if fraction <= 0.0 {
            continue;
        }
        let (row, col) = (i as u32 / map.cols.max(1), i as u32 % map.cols.max(1));
        let _ = write!(
            svg,
            "<rect x=\"{}\" y=\"{}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"#c0392b\" \
             fill-opacity=\"{:.2}\"/>",
            col * CELL,
            row * CELL,
            0.25 + 0.75 * fraction
        );
    }
    svg.push_str("</svg>");
    svg
}

/// The launch with sequence number `seq`.
fn launch_by_seq(trace: &Trace, seq: u64) -> Option<&Launch> {
    trace.launches.iter().find(|l| l.seq == seq)
}

/// The argument table of a launch pair: layouts and hashes side by side,
/// differing hashes marked.
fn arguments(page: &mut String, a: &Trace, la: &Launch, b: &Trace, lb: &Launch, differ: &[String]) {
    let kernel = a.kernel_of(la);
    page.push_str(
        "<table><tr><th>argument</th><th>access</th><th>layout</th>\
         <th>before A</th><th>before B</th><th>after A</th><th>after B</th></tr>\n",
    );
    for (i, (x, y)) in a.args_of(la).zip(b.args_of(lb)).enumerate() {
        let name = kernel.arg_name(i);
        let access = kernel.args.get(i).map_or("", |arg| arg.access.as_str());
        let named = if differ.contains(&name) {
            format!("<b>{}</b>", escape(&name))
        } else {
            escape(&name)
        };
        match (x, y) {
            (ArgRef::Tensor(x), ArgRef::Tensor(y)) => {
                let cell = |h: Option<u64>, other: Option<u64>| {
                    let text = h.map_or_else(|| "–".to_owned(), |h| format!("{h:016x}"));
                    let class = if h != other { " class=\"diff\"" } else { "" };
                    format!("<td{class}>{text}</td>")
                };
                let _ = writeln!(
                    page,
                    "<tr><td>{named}</td><td>{}</td><td>{} {:?}</td>{}{}{}{}</tr>",
                    escape(access),
                    escape(&x.layout.dtype),
                    x.layout.shape,
                    cell(x.pre, y.pre),
                    cell(y.pre, x.pre),
                    cell(x.post, y.post),
                    cell(y.post, x.post),
                );
            }
            (x, y) => {
                let _ = writeln!(
                    page,
                    "<tr><td>{named}</td><td>{}</td><td colspan=\"5\">{} | {}</td></tr>",
                    escape(access),
                    escape(&arg_words(&x)),
                    escape(&arg_words(&y)),
                );
            }
        }
    }
    page.push_str("</table>\n");
}

fn arg_words(arg: &ArgRef<'_>) -> String {
    match arg {
        ArgRef::Scalar(s) => s.to_string(),
        ArgRef::Tensor(t) => format!("{} {:?}", t.layout.dtype, t.layout.shape),
    }
}

/// The sources of the kernels of the first divergence and the root causes,
/// highlighted, with the lines that often cause nondeterminism marked.
fn sources(page: &mut String, a: &Trace, b: &Trace, report: &Report) {
    let mut names = BTreeSet::new();
    let wanted = report
        .first_divergence
        .iter()
        .chain(report.root_causes.iter().take(ROOT_CAUSES));
    let mut shown = Vec::new();
    for d in wanted {
        let found = d
            .a_index
            .and_then(|i| launch_by_seq(a, i).map(|l| (a, l)))
            .or_else(|| d.b_index.and_then(|i| launch_by_seq(b, i).map(|l| (b, l))));
        let Some((trace, launch)) = found else {
            continue;
        };
        let kernel = trace.kernel_of(launch);
        if let Some(source) = trace.source_of(kernel)
            && names.insert(kernel.name.clone())
        {
            shown.push((kernel.name.clone(), source));
        }
    }
    if shown.is_empty() {
        return;
    }
    page.push_str("<h2>Kernel sources</h2>\n");
    let syntaxes = SyntaxSet::load_defaults_newlines();
    let themes = ThemeSet::load_defaults();
    for (name, source) in shown {
        let suspicious = suspicious_lines(&source.text);
        let _ = write!(
            page,
            "<h3><code>{}</code></h3><p>{}</p><pre class=\"src\">",
            escape(&name),
            escape(&source.path),
        );
        let syntax = syntaxes.find_syntax_by_name(syntax_name(&source.lang, &source.text));
        let theme = themes.themes.get("base16-ocean.dark");
        let mut highlighter = syntax.zip(theme).map(|(s, t)| HighlightLines::new(s, t));
        for (i, line) in syntect::util::LinesWithEndings::from(&source.text).enumerate() {
            let code = line.trim_end_matches(['\n', '\r']);
            let html = highlighter
                .as_mut()
                .and_then(|h| h.highlight_line(code, &syntaxes).ok())
                .and_then(|ranges| {
                    styled_line_to_highlighted_html(&ranges, IncludeBackground::No).ok()
                })
                .unwrap_or_else(|| escape(code));
            match suspicious.iter().find(|(at, _)| *at == i) {
                Some((_, why)) => {
                    let _ = write!(
                        page,
                        "<span class=\"line suspect\" title=\"{why}\"><span class=\"mark\">! {:>4} </span>{html}</span>\
                         <span class=\"line why\">       ↑ {why}</span>",
                        i + 1,
                        why = escape(why),
                    );
                }
                None => {
                    let _ = write!(page, "<span class=\"line\">  {:>4} {html}</span>", i + 1);
                }
            }
        }
        page.push_str("</pre>\n");
    }
}

/// The aligned launches; runs of equal ones are folded into a `<details>`.
fn launch_table(page: &mut String, a: &Trace, b: &Trace, analysis: &Analysis) {
    page.push_str("<h2>Aligned launches</h2>\n");
    let rows = &analysis.alignment.rows;
    let statuses = &analysis.statuses;
    let mut i = 0;
    let mut listed = 0;
    page.push_str(TABLE_HEAD);
    while i < rows.len() {
        if listed >= TABLE_ROWS {
            let _ = writeln!(
                page,
                "</table><p>… {} more rows not listed.</p>",
                rows.len() - i
            );
            return;
        }
        let run = statuses[i..]
            .iter()
            .take_while(|s| **s == RowStatus::Equal)
            .count();
        if run > SHOWN_EQUAL {
            let (first, last) = (rows[i], rows[i + run - 1]);
            let seq = |r: Row| r.a().map_or(0, |x| a.launches[x as usize].seq);
            let _ = write!(
                page,
                "</table><details><summary>… {run} equal launches (A #{}–#{}) …</summary>{TABLE_HEAD}",
                seq(first),
                seq(last),
            );
            for k in i..i + run.min(FOLDED_ROWS) {
                row(page, a, b, analysis, k);
            }
            if run > FOLDED_ROWS {
                let _ = write!(
                    page,
                    "<tr><td colspan=\"5\">… and {} more</td></tr>",
                    run - FOLDED_ROWS
                );
            }
            let _ = write!(page, "</table></details>{TABLE_HEAD}");
            i += run;
            listed += 1;
            continue;
        }
        row(page, a, b, analysis, i);
        i += 1;
        listed += 1;
    }
    page.push_str("</table>\n");
}

const TABLE_HEAD: &str =
    "<table><tr><th></th><th>A</th><th>kernel</th><th>B</th><th>verdict</th></tr>\n";

fn row(page: &mut String, a: &Trace, b: &Trace, analysis: &Analysis, i: usize) {
    let r = analysis.alignment.rows[i];
    let (mark, class, verdict) = match analysis.statuses[i] {
        RowStatus::Equal => ("=", "", String::new()),
        RowStatus::Benign => (
            "~",
            "benign",
            "same bits, other source/config/grid".to_owned(),
        ),
        RowStatus::Divergent(d) => {
            let d = &analysis.divergences[d as usize];
            let (mark, class) = match (d.is_root_cause(), r) {
                _ if d.absorbed => ("≈", "benign"),
                (_, Row::OnlyA(_)) => ("&lt;", "only"),
                (_, Row::OnlyB(_)) => ("&gt;", "only"),
                (true, _) => ("✗", "root"),
                (false, _) => ("↓", "reached"),
            };
            (mark, class, d.kind.as_str().to_owned())
        }
    };
    let side = |trace: &Trace, index: Option<u32>| {
        index.map(|x| {
            let launch = &trace.launches[x as usize];
            (launch.seq, trace.kernel_of(launch).name.clone())
        })
    };
    let (sa, sb) = (side(a, r.a()), side(b, r.b()));
    let seq = |s: &Option<(u64, String)>| {
        s.as_ref()
            .map_or_else(String::new, |(q, _)| format!("#{q}"))
    };
    let name = sa.as_ref().or(sb.as_ref()).map_or("", |(_, n)| n.as_str());
    let _ = writeln!(
        page,
        "<tr class=\"{class}\"><td>{mark}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        seq(&sa),
        escape(name),
        seq(&sb),
        escape(&verdict),
    );
}

/// Text made safe for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_names_is_escaped() {
        assert_eq!(
            escape("<b a=\"x\">&'"),
            "&lt;b a=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}

//! `tritontui values A B --launch N`: the values a launch's tensors held
//! in two runs, captured by the recorder (`record --capture`), compared
//! argument by argument with KernelDiff metrics. Run B's launch is the one
//! the alignment pairs with run A's.

mod metrics;
mod safetensors;

use anyhow::{Context, bail};
pub use metrics::{HeatMap, Metrics, Worst};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use tritontui_engine::analysis::{Options, align_runs};
use tritontui_trace::Trace;

/// Shape version of the JSON document.
pub const VALUES_VERSION: u32 = 1;

/// The captured values of one launch in two runs, compared.
#[derive(Debug, Serialize)]
pub struct ValuesReport {
    /// Shape version of this document.
    pub report_version: u32,
    /// Run A's side.
    pub a: Side,
    /// Run B's side.
    pub b: Side,
    /// The kernel.
    pub kernel: String,
    /// Each captured tensor, before and after the launch.
    pub tensors: Vec<TensorValues>,
}

impl ValuesReport {
    /// Whether every tensor captured in both runs holds the same bits.
    pub fn equal(&self) -> bool {
        self.tensors
            .iter()
            .all(|t| t.metrics.as_ref().is_some_and(|m| m.mismatched == 0))
    }
}

/// One run's launch and the file its values are in.
#[derive(Debug, Serialize)]
pub struct Side {
    /// The trace.
    pub trace: String,
    /// The launch's `seq`.
    pub launch: u64,
    /// The sidecar file.
    pub file: String,
}

/// One argument at one moment, in both runs.
#[derive(Debug, Clone, Serialize)]
pub struct TensorValues {
    /// The argument's position in the launch record.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// `before` or `after` the launch.
    pub when: &'static str,
    /// Its dtype and shape in run A (`F32[8, 16]`).
    pub layout: String,
    /// How run B's values differ from run A's; null when they cannot be
    /// compared (`note` says why).
    pub metrics: Option<Metrics>,
    /// Why there are no metrics.
    pub note: Option<String>,
}

/// Compares the values launch `launch` (a `seq` of run A) held in the two
/// runs.
pub fn compare(a_path: &Path, b_path: &Path, launch: u64) -> anyhow::Result<ValuesReport> {
    let a = Trace::open(a_path).with_context(|| a_path.display().to_string())?;
    let b = Trace::open(b_path).with_context(|| b_path.display().to_string())?;
    let b_seq = aligned(&a, &b, launch)?;
    let ia = a
        .launches
        .iter()
        .position(|l| l.seq == launch)
        .with_context(|| format!("{}: no launch {launch}", a_path.display()))?;
    let (a_file, a_values) = captured(&a, launch)?;
    let (b_file, b_values) = captured(&b, b_seq)?;
    let kernel = a.kernel_of(&a.launches[ia]);
    Ok(ValuesReport {
        report_version: VALUES_VERSION,
        a: Side {
            trace: a_path.display().to_string(),
            launch,
            file: a_file,
        },
        b: Side {
            trace: b_path.display().to_string(),
            launch: b_seq,
            file: b_file,
        },
        kernel: kernel.name.clone(),
        tensors: compare_tensors(kernel, &a_values, &b_values),
    })
}

/// The most bytes of captured values (both runs together) that a diff,
/// a report or the UI compares by itself; `tritontui values` compares any.
pub const MAX_COMPARED_ALONG: u64 = 256 << 20;

/// The launch of `b` aligned with launch `seq` of `a`, by its `seq`.
pub fn aligned(a: &Trace, b: &Trace, seq: u64) -> anyhow::Result<u64> {
    let ia = a
        .launches
        .iter()
        .position(|l| l.seq == seq)
        .with_context(|| format!("{}: no launch {seq}", a.path.display()))?;
    let ib = align_runs(a, b, Options::default())
        .rows
        .iter()
        .find(|row| row.a() == Some(ia as u32))
        .and_then(|row| row.b())
        .with_context(|| {
            format!(
                "{}: launch {seq} has no counterpart in {}",
                a.path.display(),
                b.path.display()
            )
        })?;
    Ok(b.launches[ib as usize].seq)
}

/// The values of launch `seq_a` of `a` against launch `seq_b` of `b`,
/// argument by argument, as a diff, a report or the UI shows them; None
/// when either was not captured, an error when they are too large to
/// compare along ([`MAX_COMPARED_ALONG`]) or cannot be read.
pub fn compare_captured(
    a: &Trace,
    b: &Trace,
    seq_a: u64,
    seq_b: u64,
) -> Option<anyhow::Result<Vec<TensorValues>>> {
    let bytes = |t: &Trace, seq| {
        t.captured_values
            .iter()
            .find(|c| c.seq == seq)
            .map(|c| c.bytes)
    };
    let size = bytes(a, seq_a)? + bytes(b, seq_b)?;
    if size > MAX_COMPARED_ALONG {
        return Some(Err(anyhow::anyhow!(
            "{} MB captured: compare them with `tritontui values A B --launch {seq_a}`",
            size >> 20
        )));
    }
    let launch = a.launches.iter().find(|l| l.seq == seq_a)?;
    let kernel = a.kernel_of(launch);
    Some((|| {
        let (_, a_values) = captured(a, seq_a)?;
        let (_, b_values) = captured(b, seq_b)?;
        Ok(compare_tensors(kernel, &a_values, &b_values))
    })())
}

/// Each tensor of `a_values` against the same of `b_values`, in argument
/// order, before then after.
fn compare_tensors(
    kernel: &tritontui_trace::Kernel,
    a_values: &BTreeMap<String, safetensors::Tensor>,
    b_values: &BTreeMap<String, safetensors::Tensor>,
) -> Vec<TensorValues> {
    let mut tensors = Vec::new();
    for (name, at) in a_values {
        let Some((index, when)) = parse_name(name) else {
            continue;
        };
        let (metrics, note) = match b_values.get(name) {
            None => (None, Some("not captured in run B".to_owned())),
            Some(bt) => match metrics::compare(at, bt) {
                Some(m) => (Some(m), None),
                None if at.dtype != bt.dtype || at.shape != bt.shape => (
                    None,
                    Some(format!("run B holds {}{:?}", bt.dtype, bt.shape)),
                ),
                None => (None, Some(format!("{} is not compared", at.dtype))),
            },
        };
        tensors.push(TensorValues {
            index,
            name: kernel
                .args
                .get(index)
                .map_or_else(|| format!("arg{index}"), |d| d.name.clone()),
            when,
            layout: format!("{}{:?}", at.dtype, at.shape),
            metrics,
            note,
        });
    }
    tensors.sort_by_key(|t| (t.index, t.when == "after"));
    tensors
}

/// `3.pre` as argument 3 before the launch.
fn parse_name(name: &str) -> Option<(usize, &'static str)> {
    let (index, when) = name.split_once('.')?;
    let when = match when {
        "pre" => "before",
        "post" => "after",
        _ => return None,
    };
    Some((index.parse().ok()?, when))
}

/// The sidecar file of launch `seq` of `trace` and its tensors.
fn captured(
    trace: &Trace,
    seq: u64,
) -> anyhow::Result<(String, BTreeMap<String, safetensors::Tensor>)> {
    let path = &trace.path;
    let Some(capture) = trace.captured_values.iter().find(|c| c.seq == seq) else {
        bail!(
            "{}: launch {seq} was not captured (record it with --capture {seq})",
            path.display()
        );
    };
    let file = path.parent().unwrap_or(Path::new("")).join(&capture.file);
    let tensors = safetensors::read(&file)?;
    Ok((file.display().to_string(), tensors))
}

/// One line per tensor whose values differ, for a divergence's summary:
/// `out_ptr0 after: 63/64 differ (98.44%), max abs 1.8e-3, max ulp 1004,
/// worst [53]: -282.7 vs -282.7`.
pub fn differing_lines(tensors: &[TensorValues]) -> Vec<String> {
    tensors
        .iter()
        .filter_map(|t| {
            let m = t.metrics.as_ref().filter(|m| m.mismatched > 0)?;
            let worst = m.worst.as_ref().map_or_else(String::new, |w| {
                format!(", worst {:?}: {} vs {}", w.index, w.a, w.b)
            });
            Some(format!(
                "{} {}: {}/{} differ ({:.2}%), max abs {:.3e}, max ulp {}{worst}",
                t.name,
                t.when,
                m.mismatched,
                m.elements,
                m.mismatched_percent,
                m.max_abs,
                m.max_ulp
            ))
        })
        .collect()
}

/// The human summary of a [`ValuesReport`]: the tensors whose values
/// differ first, as a table, then those that could not be compared, then
/// the equal ones folded into one line.
pub fn summary(report: &ValuesReport) -> String {
    let mut out = format!(
        "A#{} B#{}  {}\n  A: {}\n  B: {}\n\n",
        report.a.launch, report.b.launch, report.kernel, report.a.file, report.b.file
    );
    let differing: Vec<(&TensorValues, &Metrics)> = report
        .tensors
        .iter()
        .filter_map(|t| Some((t, t.metrics.as_ref().filter(|m| m.mismatched > 0)?)))
        .collect();
    if !differing.is_empty() {
        out += &format!(
            "{:<16} {:<6} {:>18} {:>10} {:>10} {:>10} {:>10} {:>8} {:>9}  worst\n",
            "argument",
            "when",
            "mismatched",
            "max abs",
            "mean abs",
            "max rel",
            "rmse",
            "max ulp",
            "mean ulp"
        );
    }
    for (t, m) in differing {
        out += &differing_row(t, m);
    }
    for t in report.tensors.iter().filter(|t| t.metrics.is_none()) {
        out += &format!(
            "{:<16} {:<6} {}: {}\n",
            t.name,
            t.when,
            t.layout,
            t.note.as_deref().unwrap_or("")
        );
    }
    let equal: Vec<String> = report
        .tensors
        .iter()
        .filter(|t| t.metrics.as_ref().is_some_and(|m| m.mismatched == 0))
        .map(|t| format!("{} {}", t.name, t.when))
        .collect();
    if !equal.is_empty() {
        out += &format!(
            "equal in both runs ({}): {}\n",
            equal.len(),
            equal.join(", ")
        );
    }
    out += if report.equal() {
        "\nevery captured tensor holds the same bits in both runs\n"
    } else {
        "\nthe runs' values differ\n"
    };
    out
}

/// One row of the table of tensors whose values differ.
fn differing_row(t: &TensorValues, m: &Metrics) -> String {
    let worst = m.worst.as_ref().map_or_else(String::new, |w| {
        format!("{:?}: {} vs {}", w.index, w.a, w.b)
    });
    let special = match (m.nan_differ, m.inf_differ) {
        (0, 0) => String::new(),
        (nan, inf) => format!("  NaN in one run: {nan}, Inf in one run: {inf}"),
    };
    format!(
        "{:<16} {:<6} {:>18} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e} {:>8} {:>9.2}  {worst}{special}\n",
        t.name,
        t.when,
        format!(
            "{}/{} ({:.2}%)",
            m.mismatched, m.elements, m.mismatched_percent
        ),
        m.max_abs,
        m.mean_abs,
        m.max_rel,
        m.rmse,
        m.max_ulp,
        m.mean_ulp,
    )
}

#[cfg(test)]
mod tests {
    use super::safetensors::{Dtype, Tensor};
    use super::*;

    fn floats(values: &[f32]) -> Tensor {
        Tensor {
            dtype: Dtype::F32,
            shape: vec![values.len() as u64],
            bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        }
    }

    fn tensor(name: &str, when: &'static str, a: &[f32], b: &[f32]) -> TensorValues {
        TensorValues {
            index: 0,
            name: name.to_owned(),
            when,
            layout: format!("F32[{}]", a.len()),
            metrics: metrics::compare(&floats(a), &floats(b)),
            note: None,
        }
    }

    #[test]
    fn the_differing_tensors_come_first_and_the_equal_ones_fold_into_one_line() {
        let side = |trace: &str| Side {
            trace: trace.to_owned(),
            launch: 7,
            file: format!("{trace}.safetensors"),
        };
        let mut uncompared = tensor("scale", "before", &[1.0], &[1.0]);
        uncompared.metrics = None;
        uncompared.note = Some("only in run A".to_owned());
        let report = ValuesReport {
            report_version: VALUES_VERSION,
            a: side("a"),
            b: side("b"),
            kernel: "k".to_owned(),
            tensors: vec![
                tensor("in_ptr0", "before", &[1.0, 2.0], &[1.0, 2.0]),
                tensor("in_ptr1", "before", &[3.0], &[3.0]),
                uncompared,
                tensor("out_ptr0", "after", &[1.0, 2.0], &[1.0, 2.5]),
                tensor("in_ptr0", "after", &[1.0, 2.0], &[1.0, 2.0]),
            ],
        };
        let text = summary(&report);
        let lines: Vec<&str> = text.lines().skip(4).collect();
        assert!(lines[0].starts_with("argument"), "{text}");
        assert!(lines[1].starts_with("out_ptr0         after "), "{text}");
        assert!(lines[1].contains(" 1/2 (50.00%) "), "{text}");
        assert_eq!(
            lines[2], "scale            before F32[1]: only in run A",
            "{text}"
        );
        assert_eq!(
            lines[3], "equal in both runs (3): in_ptr0 before, in_ptr1 before, in_ptr0 after",
            "{text}"
        );
        assert_eq!(lines[5], "the runs' values differ", "{text}");
        assert_eq!(text.matches("in_ptr1").count(), 1, "{text}");
    }
}

//! What a trace did not see: a recording cut short or stopped by an
//! internal error, graphs that ran without their launches recorded, CUDA
//! graphs the recorder turned off, kernels a filter left out, values not
//! hashed, and whatever else the recorder wrote a `gap` record for. A
//! comparison of traces with gaps may find a divergence, but can never
//! show that the runs agree: its verdict is then `inconclusive`.

use serde::Serialize;
use tritontui_trace::{Scalar, Trace};

/// What kind of thing a trace did not see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GapKind {
    /// The trace ends before recording stopped (a crash, a kill, a full
    /// disk): whatever came after is unseen.
    EndedEarly,
    /// The recorder stopped on an internal error; the program went on
    /// unrecorded.
    Stopped,
    /// A compiled graph ran without its launches recorded (cpp_wrapper,
    /// AOTInductor).
    UnrecordedGraph,
    /// The recorder turned CUDA graphs off: the program it recorded is
    /// not the one that runs without it.
    CudaGraphsDisabled,
    /// Only the kernels a glob names were recorded.
    KernelsFiltered,
    /// No tensor was hashed: the runs' bits were not compared.
    NotHashed,
    /// The recorder wrote a `gap` record: something it could not describe.
    Recorder,
}

impl GapKind {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            GapKind::EndedEarly => "ended-early",
            GapKind::Stopped => "stopped",
            GapKind::UnrecordedGraph => "unrecorded-graph",
            GapKind::CudaGraphsDisabled => "cuda-graphs-disabled",
            GapKind::KernelsFiltered => "kernels-filtered",
            GapKind::NotHashed => "not-hashed",
            GapKind::Recorder => "recorder",
        }
    }
}

/// One thing a trace did not see.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Gap {
    /// What kind of thing.
    pub kind: GapKind,
    /// What exactly, in words.
    pub detail: String,
}

/// The gaps of one trace, in the order a reader should hear them.
pub fn of(trace: &Trace) -> Vec<Gap> {
    let mut gaps = Vec::new();
    let mut add = |kind, detail: String| gaps.push(Gap { kind, detail });
    let stopped = trace
        .end
        .as_ref()
        .and_then(|end| end.reason.strip_prefix("error"));
    if let Some(error) = stopped {
        let error = error.trim_start_matches(':').trim();
        let said = if error.is_empty() {
            String::new()
        } else {
            format!(" ({error})")
        };
        add(
            GapKind::Stopped,
            format!(
                "recording stopped after an internal error of the recorder{said}; the program went on unrecorded"
            ),
        );
    }
    if let Some(early) = &trace.early_end {
        add(
            GapKind::EndedEarly,
            format!("the trace ended early ({early}): what the program did after it is unseen"),
        );
    }
    let options = &trace.header.options;
    if options.cuda_graphs_disabled || trace.compiles.iter().any(turned_cuda_graphs_off) {
        add(
            GapKind::CudaGraphsDisabled,
            "the recorder turned CUDA graphs off: the program without it replays them".to_owned(),
        );
    }
    for graph in &trace.cuda_graphs {
        if !graph.missing.is_empty() {
            add(
                GapKind::Recorder,
                format!(
                    "CUDA graph {}: its launches' hashes are missing from every replay ({})",
                    graph.graph, graph.missing
                ),
            );
        }
    }
    let unhashed = trace.replays.iter().filter(|r| !r.hashed).count();
    if unhashed > 0 {
        add(
            GapKind::Recorder,
            format!(
                "{unhashed} CUDA graph replays' hashes did not come back: their launches are unhashed"
            ),
        );
    }
    for graph in unrecorded_graphs(trace) {
        add(
            GapKind::UnrecordedGraph,
            format!("graph {graph} ran without its launches recorded"),
        );
    }
    if options.kernels != "*" && !options.kernels.is_empty() {
        add(
            GapKind::KernelsFiltered,
            format!(
                "only kernels matching `{}` were recorded (kernels=)",
                options.kernels
            ),
        );
    }
    // The program's own hash function, where it ran, compared values.
    if options.hash == "none" && trace.custom_hashes.is_empty() {
        add(
            GapKind::NotHashed,
            "no tensor was hashed (hash=\"none\"): the runs' bits were not compared".to_owned(),
        );
    }
    for (detail, count) in said_once(&trace.gaps) {
        let times = if count > 1 {
            format!(" ({count} times)")
        } else {
            String::new()
        };
        add(GapKind::Recorder, format!("{detail}{times}"));
    }
    gaps
}

/// The recorder's gap records in words, each alike said once with how
/// often (a launch that could not be described fails the same way every
/// step), in the order they first came.
fn said_once(records: &[tritontui_trace::GapRecord]) -> Vec<(String, usize)> {
    let mut said: Vec<(String, usize)> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for gap in records {
        let detail = if gap.detail.is_empty() {
            format!("not recorded: {}", gap.what)
        } else {
            format!("not recorded: {}: {}", gap.what, gap.detail)
        };
        match at.get(&detail) {
            Some(&i) => said[i].1 += 1,
            None => {
                at.insert(detail.clone(), said.len());
                said.push((detail, 1));
            }
        }
    }
    said
}

/// Why a `compile` record says a graph ran unrecorded, if it does.
fn unrecorded_because(compile: &tritontui_trace::format::CompileRecord) -> Option<String> {
    if compile.event != "graph" {
        return None;
    }
    match compile.info.get("unrecorded")? {
        Scalar::Str(why) => Some(why.clone()),
        other => Some(other.to_string()),
    }
}

/// Whether a `compile` record says the recorder turned CUDA graphs off
/// for a compile that asked for them.
fn turned_cuda_graphs_off(compile: &tritontui_trace::format::CompileRecord) -> bool {
    compile.event == "graph"
        && compile.info.get("cuda_graphs_disabled") == Some(&Scalar::Bool(true))
}

/// The graphs a trace ran unrecorded, by name: what wrote bytes no
/// recorded launch wrote, when the trace has any.
pub fn unrecorded_graphs(trace: &Trace) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for compile in &trace.compiles {
        if let Some(why) = unrecorded_because(compile) {
            let name = format!("{} ({why})", compile.name);
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

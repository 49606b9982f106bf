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

/// One thing a trace did not see, as the trace says it (the app says it
/// in words).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gap {
    /// The recorder stopped on an internal error (what it said, when it
    /// said anything); the program went on unrecorded.
    Stopped { error: Option<String> },
    /// The trace ends before recording stopped, for this reason.
    EndedEarly { why: String },
    /// The recorder turned CUDA graphs off.
    CudaGraphsDisabled,
    /// A CUDA graph's launches' hashes are missing from every replay.
    GraphHashesMissing { graph: u64, why: String },
    /// CUDA graph replays whose hashes did not come back.
    ReplaysUnhashed { count: usize },
    /// A compiled graph ran without its launches recorded.
    UnrecordedGraph { graph: String, why: String },
    /// Only the kernels matching this glob were recorded.
    KernelsFiltered { glob: String },
    /// No tensor was hashed (`hash="none"`).
    NotHashed,
    /// The recorder's `gap` records alike: what it could not record, the
    /// detail it gave, and how many said so.
    Recorder {
        what: String,
        detail: String,
        times: usize,
    },
}

impl Gap {
    /// Its kind.
    pub fn kind(&self) -> GapKind {
        match self {
            Gap::Stopped { .. } => GapKind::Stopped,
            Gap::EndedEarly { .. } => GapKind::EndedEarly,
            Gap::CudaGraphsDisabled => GapKind::CudaGraphsDisabled,
            Gap::UnrecordedGraph { .. } => GapKind::UnrecordedGraph,
            Gap::KernelsFiltered { .. } => GapKind::KernelsFiltered,
            Gap::NotHashed => GapKind::NotHashed,
            Gap::GraphHashesMissing { .. } | Gap::ReplaysUnhashed { .. } | Gap::Recorder { .. } => {
                GapKind::Recorder
            }
        }
    }
}

/// The gaps of one trace, in the order a reader should hear them.
pub fn of(trace: &Trace) -> Vec<Gap> {
    let mut gaps = Vec::new();
    let stopped = trace
        .end
        .as_ref()
        .and_then(|end| end.reason.strip_prefix("error"));
    if let Some(error) = stopped {
        let error = error.trim_start_matches(':').trim();
        gaps.push(Gap::Stopped {
            error: (!error.is_empty()).then(|| error.to_owned()),
        });
    }
    if let Some(early) = &trace.early_end {
        gaps.push(Gap::EndedEarly {
            why: early.to_string(),
        });
    }
    let options = &trace.header.options;
    if options.cuda_graphs_disabled || trace.compiles.iter().any(turned_cuda_graphs_off) {
        gaps.push(Gap::CudaGraphsDisabled);
    }
    for graph in &trace.cuda_graphs {
        if !graph.missing.is_empty() {
            gaps.push(Gap::GraphHashesMissing {
                graph: graph.graph,
                why: graph.missing.clone(),
            });
        }
    }
    let unhashed = trace.replays.iter().filter(|r| !r.hashed).count();
    if unhashed > 0 {
        gaps.push(Gap::ReplaysUnhashed { count: unhashed });
    }
    gaps.extend(unrecorded_graphs(trace));
    if options.kernels != "*" && !options.kernels.is_empty() {
        gaps.push(Gap::KernelsFiltered {
            glob: options.kernels.clone(),
        });
    }
    // The program's own hash function, where it ran, compared values.
    if options.hash == "none" && trace.custom_hashes.is_empty() {
        gaps.push(Gap::NotHashed);
    }
    gaps.extend(said_once(&trace.gaps));
    gaps
}

/// The recorder's gap records, each alike given once with how often (a
/// launch that could not be described fails the same way every step), in
/// the order they first came.
fn said_once(records: &[tritontui_trace::GapRecord]) -> Vec<Gap> {
    let mut said: Vec<Gap> = Vec::new();
    let mut at: std::collections::HashMap<(&str, &str), usize> = std::collections::HashMap::new();
    for gap in records {
        match at.get(&(gap.what.as_str(), gap.detail.as_str())) {
            Some(&i) => {
                if let Gap::Recorder { times, .. } = &mut said[i] {
                    *times += 1;
                }
            }
            None => {
                at.insert((&gap.what, &gap.detail), said.len());
                said.push(Gap::Recorder {
                    what: gap.what.clone(),
                    detail: gap.detail.clone(),
                    times: 1,
                });
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

/// The graphs a trace ran unrecorded, each once.
fn unrecorded_graphs(trace: &Trace) -> Vec<Gap> {
    let mut graphs: Vec<Gap> = Vec::new();
    for compile in &trace.compiles {
        if let Some(why) = unrecorded_because(compile) {
            let graph = Gap::UnrecordedGraph {
                graph: compile.name.clone(),
                why,
            };
            if !graphs.contains(&graph) {
                graphs.push(graph);
            }
        }
    }
    graphs
}

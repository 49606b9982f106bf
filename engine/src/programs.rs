//! Whether two runs ran the same program: the compiled graphs each
//! called, the kernels one run launched and the other never did, the
//! kernels both launched under one name from different sources, and the
//! Inductor config their graphs were compiled with. A
//! comparison of two programs (eager against compiled, two configs, two
//! versions) is read differently from one of a program run twice: its
//! launches need not match, nor its bits.

use crate::Sides;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap, HashSet};
use tritontui_trace::Trace;
use tritontui_trace::format::Scalar;

/// What makes two runs two programs, as far as their traces say.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ProgramDifferences {
    /// The distinct compiled graphs each run called.
    pub graphs: Sides<usize>,
    /// The kernels (allocations left out) each run launched that the
    /// other never did, by name, in the order first launched; none for a
    /// run whose counterpart's trace ended early (it may not have got
    /// there).
    pub kernels_only: Sides<Vec<String>>,
    /// The kernels both runs launched under one name, each from another
    /// source, in run A's order.
    pub other_source: Vec<String>,
    /// The Inductor config entries (`inductor.NAME`) whose values differ
    /// between the compiles the runs were seen to make (the entries of
    /// their `fx_graph_cache` records), by name; none when a run's trace
    /// saw no compile. Such a config can build the same source otherwise
    /// (the C++ compiler's flags).
    pub configs: Vec<String>,
}

impl ProgramDifferences {
    /// What the traces of runs A and B say of their programs.
    pub fn of(a: &Trace, b: &Trace) -> ProgramDifferences {
        let (in_a, in_b) = (launched(a), launched(b));
        let only = |mine: &Launched, theirs: &Launched, theirs_stopped_short: bool| {
            if theirs_stopped_short {
                return Vec::new();
            }
            mine.order
                .iter()
                .filter(|name| !theirs.sources.contains_key(*name))
                .map(|name| (*name).to_owned())
                .collect()
        };
        let other_source = in_a
            .order
            .iter()
            .filter(|name| {
                in_b.sources
                    .get(*name)
                    .is_some_and(|theirs| theirs != &in_a.sources[*name])
            })
            .map(|name| (*name).to_owned())
            .collect();
        ProgramDifferences {
            graphs: Sides {
                a: graphs_called(a),
                b: graphs_called(b),
            },
            kernels_only: Sides {
                a: only(&in_a, &in_b, b.stopped_short()),
                b: only(&in_b, &in_a, a.stopped_short()),
            },
            other_source,
            configs: configs_differing(a, b),
        }
    }

    /// Whether the traces say the runs ran different programs.
    pub fn any(&self) -> bool {
        (self.graphs.a == 0) != (self.graphs.b == 0)
            || !self.kernels_only.a.is_empty()
            || !self.kernels_only.b.is_empty()
            || !self.other_source.is_empty()
            || !self.configs.is_empty()
    }
}

/// Each Inductor config entry a run's compiles were made with, with every
/// value it had there (a compile's entries are those off their defaults).
fn compile_configs(trace: &Trace) -> Option<BTreeSet<(&str, &str)>> {
    let mut compiles = trace
        .compiles
        .iter()
        .filter(|c| c.event == "fx_graph_cache")
        .peekable();
    compiles.peek()?;
    Some(
        compiles
            .flat_map(|c| &c.info)
            .filter(|(name, _)| name.starts_with("inductor."))
            .filter_map(|(name, value)| match value {
                Scalar::Str(value) => Some((name.as_str(), value.as_str())),
                _ => None,
            })
            .collect(),
    )
}

/// The Inductor config entries, by name, set to a value in one run's
/// compiles that the other run's never had.
fn configs_differing(a: &Trace, b: &Trace) -> Vec<String> {
    let (Some(x), Some(y)) = (compile_configs(a), compile_configs(b)) else {
        return Vec::new();
    };
    x.symmetric_difference(&y)
        .map(|(name, _)| (*name).to_owned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The kernels a run's program launched (autotuning and allocations left
/// out), by name: one name may stand for several kernels (each compiled
/// graph numbers its own from 0), so a name holds the sources of all.
struct Launched<'t> {
    /// The names in the order first launched.
    order: Vec<&'t str>,
    /// The sources launched under each name (None: not recorded).
    sources: HashMap<&'t str, BTreeSet<Option<&'t str>>>,
}

fn launched(trace: &Trace) -> Launched<'_> {
    let mut seen = HashSet::new();
    let mut out = Launched {
        order: Vec::new(),
        sources: HashMap::new(),
    };
    let kernels = trace
        .program_launches()
        .map(|(_, launch)| launch.kernel)
        .filter(|&k| seen.insert(k))
        .map(|k| &trace.kernels[k as usize])
        .filter(|k| !k.is_allocation());
    for kernel in kernels {
        let source = trace.source_of(kernel).map(|s| s.text.as_str());
        let name = kernel.name.as_str();
        if !out.sources.contains_key(name) {
            out.order.push(name);
        }
        out.sources.entry(name).or_default().insert(source);
    }
    out
}

/// How many distinct compiled graphs a run called.
fn graphs_called(trace: &Trace) -> usize {
    trace
        .calls
        .iter()
        .map(|call| &*call.graph)
        .collect::<HashSet<_>>()
        .len()
}

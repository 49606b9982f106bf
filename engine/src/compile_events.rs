//! Why two runs compiled different programs: the recompilations (with
//! the guards that failed) and graph breaks (with their reasons) that one
//! run's trace holds and the other's does not, from the `compile` records
//! the recorder takes from Dynamo's structured events.

use serde::Serialize;
use tritontui_trace::Trace;
use tritontui_trace::format::{CompileRecord, Scalar};

/// A recompilation or graph break in one run only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompileDifference {
    /// `A` or `B`: the run that has it.
    pub run: &'static str,
    /// `recompile` or `graph_break`.
    pub event: String,
    /// Dynamo's compile id (`frame/attempt`).
    pub compile_id: String,
    /// The function compiled (for a recompile), where known.
    pub function: Option<String>,
    /// `file:line` in the user's code.
    pub location: Option<String>,
    /// The guards that failed, or the graph break's reason.
    pub detail: String,
    /// When, in nanoseconds since the run's trace was created.
    pub ts: u64,
}

/// The recompilations and graph breaks of each run that the other lacks
/// (as many times as it lacks them), A's first.
pub fn differences(a: &Trace, b: &Trace) -> Vec<CompileDifference> {
    let (ea, eb) = (events(a, "A"), events(b, "B"));
    let mut out = only_in(&ea, &eb);
    out.extend(only_in(&eb, &ea));
    out
}

/// `mine` less `theirs`, each of theirs matching one of mine at most.
fn only_in(mine: &[CompileDifference], theirs: &[CompileDifference]) -> Vec<CompileDifference> {
    let mut unmatched: Vec<&CompileDifference> = theirs.iter().collect();
    mine.iter()
        .filter(|e| match unmatched.iter().position(|t| same_event(t, e)) {
            Some(i) => {
                unmatched.swap_remove(i);
                false
            }
            None => true,
        })
        .cloned()
        .collect()
}

/// The same event in two runs: all but the run and the time agree.
fn same_event(x: &CompileDifference, y: &CompileDifference) -> bool {
    x.event == y.event
        && x.compile_id == y.compile_id
        && x.function == y.function
        && x.location == y.location
        && x.detail == y.detail
}

/// A trace's recompilations and graph breaks, each recompile named by
/// the compilation it started.
fn events(trace: &Trace, run: &'static str) -> Vec<CompileDifference> {
    let info = |c: &CompileRecord, key: &str| match c.info.get(key) {
        Some(Scalar::Str(s)) => Some(s.clone()),
        _ => None,
    };
    let start = |id: &str| {
        trace
            .compiles
            .iter()
            .find(|c| c.event == "dynamo_start" && info(c, "compile_id").as_deref() == Some(id))
    };
    trace
        .compiles
        .iter()
        .filter(|c| c.event == "recompile" || c.event == "graph_break")
        .map(|c| {
            let compile_id = info(c, "compile_id").unwrap_or_default();
            let started = (c.event == "recompile")
                .then(|| start(&compile_id))
                .flatten();
            CompileDifference {
                run,
                event: c.event.clone(),
                function: started.map(|s| s.name.clone()),
                location: info(c, "location").or_else(|| started.and_then(|s| info(s, "location"))),
                detail: info(c, "reasons")
                    .or_else(|| info(c, "reason"))
                    .unwrap_or_default(),
                compile_id,
                ts: c.ts,
            }
        })
        .collect()
}

/// What explains the launches only run `run` (`A` or `B`) made, from
/// `first` to `last` (their times): the first recompilation or graph break
/// of that run alone among them, else the last one before them.
pub fn cause(a: &Trace, b: &Trace, run: &str, first: u64, last: u64) -> Option<CompileDifference> {
    let mine: Vec<CompileDifference> = differences(a, b)
        .into_iter()
        .filter(|d| d.run == run && d.ts <= last)
        .collect();
    let found = mine
        .iter()
        .filter(|d| d.ts >= first)
        .min_by_key(|d| d.ts)
        .or_else(|| mine.iter().max_by_key(|d| d.ts))?;
    Some(found.clone())
}

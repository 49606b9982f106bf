//! The error a launch of run B starts from: the largest error of what it
//! reads (relative and absolute, each on its own), followed back through
//! the data flow. A tensor an aligned point holds carries that point's
//! error, known. A floating tensor with samples that no point of run A
//! matches (a buffer only run B materializes, or one the alignment left
//! out) carries the error its launch started from, as an estimate: its
//! launch may have added more; it holds equal bits as far as the data
//! flow shows when its launch read equal bits. Anything else a launch writes (integers,
//! tensors without samples) carries what its launch started from, known
//! as that was; a graph input, or bytes no recorded launch wrote, none.

use crate::compare::reads_values;
use crate::producer::{Origin, find_origins, trace_flow};
use rustc_hash::{FxHashMap, FxHashSet};
use tritontui_trace::{ArgIndex, ArgRef, Trace};

/// The largest errors of what a launch read.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Upstream {
    /// The largest relative error (`PointError::relative`).
    pub relative: f64,
    /// The largest absolute error (`PointError::rms`).
    pub absolute: f64,
    /// Whether every error it took is known (else some are estimates).
    pub known: bool,
    /// Whether everything it read holds the same bits in both runs, as far
    /// as the data flow shows (aligned points with equal hashes, graph
    /// inputs, what no recorded launch wrote), or was made by run B alone
    /// from such (a buffer only B materializes, whose launch read them):
    /// then any error it holds arose from equal inputs.
    pub equal: bool,
}

impl Upstream {
    /// What the read of nothing, or of a graph input, carries.
    const NONE: Upstream = Upstream {
        relative: 0.0,
        absolute: 0.0,
        known: true,
        equal: true,
    };

    fn max(self, other: Upstream) -> Upstream {
        Upstream {
            relative: self.relative.max(other.relative),
            absolute: self.absolute.max(other.absolute),
            known: self.known && other.known,
            equal: self.equal && other.equal,
        }
    }
}

/// For each program launch of `trace` (by index), the largest errors of
/// what it reads, given the errors `(relative, absolute, bitwise equal)`
/// of the aligned points and the writes with samples.
pub fn upstream_errors(
    trace: &Trace,
    aligned: &FxHashMap<(u32, ArgIndex), (f64, f64, bool)>,
    sampled: &FxHashSet<(u32, ArgIndex)>,
) -> FxHashMap<u32, Upstream> {
    let queries = value_reads(trace);
    let origins = find_origins(trace, &queries);
    let mut reads: FxHashMap<u32, Vec<Origin>> = FxHashMap::default();
    for (&(launch, _), origin) in queries.iter().zip(origins) {
        reads.entry(launch).or_default().push(origin);
    }
    // The error each write carries, launch by launch in order.
    let mut carried: FxHashMap<(u32, ArgIndex), Upstream> = FxHashMap::default();
    let mut upstream = FxHashMap::default();
    for (launch, l) in trace.program_launches() {
        let launch = launch as u32;
        let start = reads
            .get(&launch)
            .into_iter()
            .flatten()
            .filter_map(|origin| match origin {
                Origin::Launch(writer, arg) => carried.get(&(*writer, *arg)).copied(),
                _ => None,
            })
            .fold(Upstream::NONE, Upstream::max);
        upstream.insert(launch, start);
        for (arg, value) in trace.args_of(l).enumerate() {
            let ArgRef::Tensor(t) = value else { continue };
            if t.written {
                let key = (launch, arg as ArgIndex);
                let errors = match aligned.get(&key) {
                    Some(&(relative, absolute, equal)) => Upstream {
                        relative,
                        absolute,
                        known: true,
                        equal,
                    },
                    None if sampled.contains(&key) => Upstream {
                        known: false,
                        ..start
                    },
                    None => start,
                };
                carried.insert(key, errors);
            }
        }
    }
    upstream
}

/// Every tensor argument of `trace`'s program launches whose values its
/// launch reads, in order.
pub(super) fn value_reads(trace: &Trace) -> Vec<(u32, ArgIndex)> {
    let mut queries = Vec::new();
    for (launch, l) in trace.program_launches() {
        let kernel = trace.kernel_of(l);
        for (arg, value) in trace.args_of(l).enumerate() {
            if matches!(value, ArgRef::Tensor(_)) && reads_values(kernel, arg) {
                queries.push((launch as u32, arg as ArgIndex));
            }
        }
    }
    queries
}

/// The writes of `trace` that reach anything: those some later launch
/// reads (all or part of what it reads), and the last writes of its
/// results. A write nothing reads cannot carry an error anywhere.
pub fn reaching_writes(trace: &Trace) -> FxHashSet<(u32, ArgIndex)> {
    let (writers, flow) = trace_flow(trace, &value_reads(trace));
    let read = writers
        .iter()
        .flat_map(|w| std::iter::once(&w.last).chain(&w.earlier));
    let kept = flow.result_writers.iter().map(|w| &w.origin);
    read.chain(kept)
        .filter_map(|origin| match *origin {
            Origin::Launch(launch, arg) => Some((launch, arg)),
            _ => None,
        })
        .collect()
}

//! The second pass: where each differing input of a divergence came from
//! in each run (`producer`'s data flow), which divergence explains it (its
//! producer's, or the first to read the same outside value), and so which
//! divergences are root causes; and the same for differing results.

use super::{Divergence, InputOrigin, Kind, LaunchRows, Overwrite, RowStatus};
use crate::align::Alignment;
use crate::producer::{Flow, Origin, ResultWriter, trace_flow};
use crate::results::ResultComparison;
use rustc_hash::FxHashMap;
use tritontui_trace::{Access, ArgIndex, Trace};

/// Sets each divergence's root cause, in one pass: whatever reaches a
/// divergence comes before it.
pub(super) fn find_roots(divergences: &mut [Divergence]) {
    for index in 0..divergences.len() {
        divergences[index].root = match divergences[index].reached_from {
            Some((up, _)) if up < index => divergences[up].root,
            _ => index,
        };
    }
}

/// Finds the producers of every differing input and marks divergences
/// explained by a divergent producer as reached from it; returns both
/// traces' data flow (`None` when nothing diverges).
pub(super) fn explain_inputs(
    (a, b): (&Trace, &Trace),
    alignment: &Alignment,
    rows: &(LaunchRows, LaunchRows),
    statuses: &[RowStatus],
    divergences: &mut [Divergence],
) -> (Flow, Flow) {
    let mut queries_a = Vec::new();
    let mut queries_b = Vec::new();
    for d in divergences
        .iter()
        .filter(|d| d.kind == Kind::DivergentInput)
    {
        if let (Some(x), Some(y)) = (d.a, d.b) {
            for &arg in &d.args {
                queries_a.push((x, arg));
                queries_b.push((y, arg));
            }
        }
    }
    let ((origins_a, flow_a), (origins_b, flow_b)) =
        crate::parallel::both(|| trace_flow(a, &queries_a), || trace_flow(b, &queries_b));
    let (rows_a, rows_b) = rows;
    let mut answers = origins_a.into_iter().zip(origins_b);
    // The first divergence to read each unexplained outside value; later
    // reads of the same unchanged bytes are reached from it.
    let mut first_reader: FxHashMap<External, usize> = FxHashMap::default();
    for index in 0..divergences.len() {
        let Some(launch) = divergences[index]
            .a
            .filter(|_| divergences[index].kind == Kind::DivergentInput)
        else {
            continue;
        };
        let args = divergences[index].args.clone();
        let readers = (launch, divergences[index].b.unwrap_or_default());
        let mut origins = Vec::with_capacity(args.len());
        for arg in args {
            let Some((writers_a, writers_b)) = answers.next() else {
                break;
            };
            let (mut oa, mut ob) = (writers_a.last, writers_b.last);
            let explains = |o: Origin, rows: &LaunchRows| {
                explanation(o, rows, statuses, divergences).map(|up| (up, o))
            };
            let mut by_producer = explanation(oa, rows_a, statuses, divergences)
                .or_else(|| explanation(ob, rows_b, statuses, divergences));
            // Else an earlier writer whose bytes the input still holds (part
            // of a reused buffer), in either run, named as its origin.
            if by_producer.is_none() {
                if let Some((up, o)) = writers_a.earlier.iter().find_map(|&o| explains(o, rows_a)) {
                    (by_producer, oa) = (Some(up), o);
                } else if let Some((up, o)) =
                    writers_b.earlier.iter().find_map(|&o| explains(o, rows_b))
                {
                    (by_producer, ob) = (Some(up), o);
                }
            }
            // A launch that absorbs an outside value does not stand for
            // it: a later reader whose outputs differ does.
            let absorbed = divergences[index].absorbed;
            let by_first_reader = by_producer.is_none().then(|| {
                let key = External::of(a, launch, arg, oa)?;
                match first_reader.get(&key) {
                    Some(&first) => Some(first),
                    None => {
                        if !absorbed {
                            first_reader.insert(key, index);
                        }
                        None
                    }
                }
            });
            let overwrite = by_producer
                .is_none()
                .then(|| overwrite_of((a, b), alignment, rows, readers, arg, (oa, ob)))
                .flatten();
            origins.push(InputOrigin {
                arg,
                a: oa,
                b: ob,
                explained_by: by_producer.or(by_first_reader.flatten()),
                same_outside_value: by_first_reader.flatten().is_some(),
                overwrite,
            });
        }
        // Old bytes of an in/out argument that no recorded launch produced
        // are scratch the kernel writes before it reads (Inductor's
        // in_out_ptr buffers), and bytes an op returned without writing
        // them are state its consumer ignores too (attention's random
        // state without dropout): neither makes a launch a root cause when
        // another of its inputs is explained. Alone, they still do.
        let kernel = a.kernel_of(&a.launches[launch as usize]);
        let returned_unwritten = |o: Origin| match o {
            Origin::Allocated(l, _) => !a.kernel_of(&a.launches[l as usize]).is_allocation(),
            _ => false,
        };
        let stale = |o: &InputOrigin| {
            let scratch = kernel.access_of(usize::from(o.arg)) == Access::Inout
                && matches!(o.a, Origin::Unrecorded | Origin::Allocated(..));
            o.explained_by.is_none() && (scratch || returned_unwritten(o.a))
        };
        let first_explained = origins
            .iter()
            .find_map(|o| o.explained_by.map(|up| (up, o.arg)));
        // Such bytes alone differing are not what made the outputs differ
        // where something else can have: another source, launch or
        // config, settings in force or compiled with. (Alone on one
        // kernel with nothing else, they still stand for the cause.)
        let only_stale = !origins.is_empty() && origins.iter().all(stale);
        let kind_without_them = match (&divergences[index].diff, divergences[index].b) {
            (Some(diff), Some(y)) if only_stale => {
                super::classify::kind_on_equal_inputs(a, b, (launch, y), diff)
                    .filter(|&kind| kind != Kind::NondeterministicKernel)
            }
            _ => None,
        };
        let d = &mut divergences[index];
        d.reached_from = first_explained
            .filter(|_| origins.iter().all(|o| o.explained_by.is_some() || stale(o)));
        d.origins = origins;
        if let (Some(kind), Some(diff)) = (kind_without_them, &d.diff) {
            d.kind = kind;
            d.args = diff.outputs.clone();
            d.absorbed = false;
        }
    }
    (flow_a, flow_b)
}

/// Which run read input `arg` of its reader (`readers`: the launch in A,
/// in B) from a later write, when the runs read it from launches (`origins`)
/// that are not counterparts; `None` when they read it from counterparts or
/// not both from recorded launches.
fn overwrite_of(
    runs: (&Trace, &Trace),
    alignment: &Alignment,
    rows: &(LaunchRows, LaunchRows),
    readers: (u32, u32),
    arg: ArgIndex,
    origins: (Origin, Origin),
) -> Option<Overwrite> {
    let (Origin::Launch(pa, _), Origin::Launch(pb, _)) = origins else {
        return None;
    };
    let row_a = rows.0.row(pa)?;
    let row_b = rows.1.row(pb)?;
    if row_a == row_b {
        return None;
    }
    let in_a = row_a > row_b;
    let (trace, reader, by, counterpart) = if in_a {
        (runs.0, readers.0, pa, alignment.rows[row_b as usize].a())
    } else {
        (runs.1, readers.1, pb, alignment.rows[row_a as usize].b())
    };
    let replaced = counterpart.filter(|&c| wrote_what_is_read(trace, c, reader, arg));
    Some(Overwrite { in_a, by, replaced })
}

/// Whether launch `writer` of `trace` wrote any byte argument `arg` of
/// launch `reader` reads.
fn wrote_what_is_read(trace: &Trace, writer: u32, reader: u32, arg: ArgIndex) -> bool {
    use tritontui_trace::ArgRef;
    let read = &trace.launches[reader as usize];
    let Some(ArgRef::Tensor(t)) = trace.args_of(read).nth(usize::from(arg)) else {
        return false;
    };
    let read = t.span(read.device);
    let launch = &trace.launches[writer as usize];
    let kernel = trace.kernel_of(launch);
    trace.args_of(launch).enumerate().any(|(i, w)| match w {
        ArgRef::Tensor(written) if kernel.wrote(i, &w) => {
            written.span(launch.device).overlaps(&read)
        }
        _ => false,
    })
}

/// Marks each differing result that holds a divergence's differing write
/// (in either run) as explained by that divergence, and each that holds
/// an outside value (a graph input no recorded launch wrote since, bytes
/// no recorded launch wrote) as explained by the first divergence that
/// read that same value.
pub(super) fn explain_results(
    a: &Trace,
    results: &mut ResultComparison,
    rows: &(LaunchRows, LaunchRows),
    statuses: &[RowStatus],
    divergences: &[Divergence],
) {
    // A write that something unrecorded changed since explains nothing.
    let written_by = |writer: Option<ResultWriter>, rows: &LaunchRows| {
        writer
            .filter(|w| w.holds != Some(false))
            .and_then(|w| explanation(w.origin, rows, statuses, divergences))
    };
    let Some(live) = a.results.as_deref() else {
        return;
    };
    for r in &mut results.differences {
        r.explained_by = written_by(r.writer_a, &rows.0)
            .or_else(|| written_by(r.writer_b, &rows.1))
            .or_else(|| first_reader_of(a, &live[r.a], r.writer_a, divergences))
            .or_else(|| overwritten_reader(r.writer_a, r.writer_b, divergences));
    }
}

/// The first divergence that read what a result holds where the runs read
/// different writes (an overwrite): the same two launches wrote the
/// result's bytes last in each run (`writers`).
fn overwritten_reader(
    writer_a: Option<ResultWriter>,
    writer_b: Option<ResultWriter>,
    divergences: &[Divergence],
) -> Option<usize> {
    let launch = |o: Origin| match o {
        Origin::Launch(l, _) => Some(l),
        _ => None,
    };
    let a = launch(writer_a?.origin)?;
    let b = launch(writer_b?.origin)?;
    divergences.iter().position(|d| {
        d.origins
            .iter()
            .any(|o| o.overwrite.is_some() && launch(o.a) == Some(a) && launch(o.b) == Some(b))
    })
}

/// The first divergence that read the outside value result `t` of run A
/// holds (`writer`: what last wrote it): the same graph input, or bytes
/// of it no recorded launch wrote.
fn first_reader_of(
    a: &Trace,
    t: &tritontui_trace::LiveTensor,
    writer: Option<ResultWriter>,
    divergences: &[Divergence],
) -> Option<usize> {
    let writer = writer.filter(|w| w.holds != Some(false))?;
    let held = a.live_span(t);
    let reads_it = |d: &Divergence, o: &InputOrigin| match (writer.origin, o.a) {
        (Origin::GraphInput(i), Origin::GraphInput(j)) => i == j,
        (Origin::Unrecorded, Origin::Unrecorded) => d.a.is_some_and(|x| {
            let launch = &a.launches[x as usize];
            match a.args_of(launch).nth(usize::from(o.arg)) {
                Some(tritontui_trace::ArgRef::Tensor(arg)) => {
                    arg.span(launch.device).overlaps(&held)
                }
                _ => false,
            }
        }),
        _ => false,
    };
    divergences
        .iter()
        .position(|d| !d.absorbed && d.origins.iter().any(|o| reads_it(d, o)))
}

/// An outside value that entered the recorded launches unexplained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum External {
    /// Bytes a launch wrote identically in both runs, changed since outside
    /// the recorded region.
    Overwritten(u32, ArgIndex),
    /// Bytes no recorded launch wrote: device, address and, for a graph
    /// input, its hash as it entered (in run A). A graph given the same
    /// tensor again (a weight, in the backward pass) gives the same value,
    /// whatever view of it a launch reads.
    Value(i32, u64, Option<u64>),
}

impl External {
    fn of(a: &Trace, launch: u32, arg: ArgIndex, oa: Origin) -> Option<External> {
        use tritontui_trace::ArgRef;
        let l = &a.launches[launch as usize];
        match (oa, a.args_of(l).nth(usize::from(arg))?) {
            (Origin::Launch(p, parg), _) => Some(External::Overwritten(p, parg)),
            (Origin::Scalar, _) | (_, ArgRef::Scalar(_)) => None,
            (Origin::Allocated(p, parg), _) => Some(External::Overwritten(p, parg)),
            // The tensor as it entered, whatever view of it this launch reads.
            (Origin::GraphInput(i), _) => {
                let input = &a.inputs[i as usize];
                Some(External::Value(input.device, input.ptr, input.hash))
            }
            (Origin::Unrecorded, ArgRef::Tensor(t)) => Some(External::Value(l.device, t.ptr, None)),
        }
    }
}

/// The divergence of the producer `origin`, if that producer's output
/// through the producing argument differs (or cannot be shown equal).
fn explanation(
    origin: Origin,
    rows: &LaunchRows,
    statuses: &[RowStatus],
    divergences: &[Divergence],
) -> Option<usize> {
    let Origin::Launch(launch, arg) = origin else {
        return None;
    };
    let row = rows.row(launch)?;
    let RowStatus::Divergent(d) = *statuses.get(row as usize)? else {
        return None;
    };
    let producer = &divergences[d as usize];
    let passes_it_on = match &producer.diff {
        // Present in one run only: everything it wrote differs in kind.
        None => true,
        Some(diff) => diff.outputs.contains(&arg) || diff.outputs_unhashed,
    };
    passes_it_on.then_some(d as usize)
}

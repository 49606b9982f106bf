//! The third pass: each divergence followed forward through the data flow
//! to the program's results (the writes that survive into results not
//! settled by the comparison, and the values handed to the host), and
//! back up the divergences that explain one another.

use super::classify::reads_to_host;
use super::{Divergence, Impact, Kind};
use crate::align::Alignment;
use crate::producer::{Flow, Survivors};
use tritontui_trace::{ArgIndex, Span, Trace};

/// Follows every divergence forward through the data flow to the results:
/// a divergence reaches them when it wrote differing bytes that are part
/// of them at the end, or when a divergence it explains does.
pub(super) fn assess_impact(
    (a, b): (&Trace, &Trace),
    alignment: &Alignment,
    flows: &Option<(Flow, Flow)>,
    open: &(OpenResults, OpenResults),
    divergences: &mut [Divergence],
) {
    let Some((flow_a, flow_b)) = flows else {
        return;
    };
    let flows = (&flow_a.survivors, &flow_b.survivors);
    let (direct, uncompared): (Vec<bool>, Vec<bool>) = divergences
        .iter()
        .map(
            |d| match reaches_directly((a, b), alignment, flows, open, d) {
                Survival::Differs => (true, false),
                Survival::Uncompared => (false, true),
                Survival::Nowhere => (false, false),
            },
        )
        .unzip();
    // Every upstream divergence explains a later one, so one backward pass
    // sees each divergence's downstream complete.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); divergences.len()];
    for (index, d) in divergences.iter().enumerate() {
        for up in d.origins.iter().filter_map(|o| o.explained_by) {
            if up < index && !children[up].contains(&index) {
                children[up].push(index);
            }
        }
    }
    let mut reaches = direct;
    let mut absorbers: Vec<Vec<usize>> = vec![Vec::new(); divergences.len()];
    for index in (0..divergences.len()).rev() {
        if divergences[index].absorbed {
            reaches[index] = false;
            absorbers[index] = vec![index];
            continue;
        }
        reaches[index] |= children[index].iter().any(|&child| reaches[child]);
        // Who absorbs it matters only when nothing of it reaches the results.
        if !reaches[index] {
            let mut by: Vec<usize> = children[index]
                .iter()
                .flat_map(|&child| absorbers[child].iter().copied())
                .collect();
            by.sort_unstable();
            by.dedup();
            absorbers[index] = by;
        }
    }
    for (index, d) in divergences.iter_mut().enumerate() {
        d.impact = if reaches[index] {
            Impact::Reaches
        } else if uncompared[index] {
            Impact::Uncompared
        } else {
            Impact::Absorbed(std::mem::take(&mut absorbers[index]))
        };
    }
}

/// Whether a divergence itself put differing values into the results (in
/// either run): wrote differing bytes that are part of them at the end, or
/// handed a differing input to the host.
fn reaches_directly(
    (a, b): (&Trace, &Trace),
    alignment: &Alignment,
    (flow_a, flow_b): (&Survivors, &Survivors),
    (open_a, open_b): &(OpenResults, OpenResults),
    d: &Divergence,
) -> Survival {
    if d.absorbed {
        return Survival::Nowhere;
    }
    if d.kind == Kind::DivergentInput && reads_to_host(a, alignment.rows[d.row]) {
        return Survival::Differs;
    }
    match (&d.diff, d.a, d.b) {
        (Some(diff), Some(x), Some(y)) => {
            let differing = |arg: &ArgIndex| flow_a.survives(x, *arg) || flow_b.survives(y, *arg);
            // Outputs not hashed may differ: any surviving write counts.
            let reaches = diff.outputs.iter().any(differing)
                || (diff.outputs_unhashed && (flow_a.any_survives(x) || flow_b.any_survives(y)));
            if reaches {
                Survival::Differs
            } else {
                Survival::Nowhere
            }
        }
        // Launches in one run only: whatever of theirs survives differs,
        // except in results that hold the same bits as their counterparts
        // and in results without one.
        _ => alignment.rows[d.row..d.row + d.rows]
            .iter()
            .flat_map(|row| {
                let in_a = row.a().map(|x| open_a.survival(a, flow_a, x));
                let in_b = row.b().map(|y| open_b.survival(b, flow_b, y));
                in_a.into_iter().chain(in_b)
            })
            .max()
            .unwrap_or(Survival::Nowhere),
    }
}

/// Where a launch's writes survive among the results, most telling last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Survival {
    /// In no result whose bits differ or lack a counterpart.
    Nowhere,
    /// Only in results the run alone has.
    Uncompared,
    /// In the results, where they (may) differ.
    Differs,
}

/// The byte ranges of a run's results that are not settled (paired with a
/// counterpart holding the same bits), each with whether a write into it
/// makes the results differ: where a write of a launch the other run
/// lacks still reaches the results, or reaches a result nothing compares.
/// None when the trace does not record its results (every surviving
/// write counts).
pub(super) struct OpenResults(Option<Vec<OpenResult>>);

/// One result that is not settled: device, byte range, and whether it
/// differs from the other run's results when written (it is paired, or
/// the other run too has results without a counterpart: a result that
/// changed shape, say). A result only one run has, beside results that
/// all match the other run's (a CUDA graph's static buffers), does not.
struct OpenResult {
    span: Span,
    compared: bool,
}

impl OpenResults {
    /// `other_unpaired`: whether the other run has results without a
    /// counterpart.
    pub(super) fn of(
        trace: &Trace,
        settled: &[bool],
        paired: &[bool],
        other_unpaired: bool,
    ) -> OpenResults {
        let flag = |flags: &[bool], i: usize| flags.get(i).copied().unwrap_or(false);
        OpenResults(trace.results.as_ref().map(|results| {
            results
                .iter()
                .enumerate()
                .filter(|(i, _)| !flag(settled, *i))
                .map(|(i, t)| OpenResult {
                    span: trace.live_span(t),
                    compared: other_unpaired || flag(paired, i),
                })
                .collect()
        }))
    }

    /// Where the writes of launch `launch` survive among the results.
    fn survival(&self, trace: &Trace, survivors: &Survivors, launch: u32) -> Survival {
        let Some(open) = &self.0 else {
            return if survivors.any_survives(launch) {
                Survival::Differs
            } else {
                Survival::Nowhere
            };
        };
        let l = &trace.launches[launch as usize];
        let mut survival = Survival::Nowhere;
        for (i, arg) in trace.args_of(l).enumerate() {
            let tritontui_trace::ArgRef::Tensor(t) = arg else {
                continue;
            };
            if !survivors.survives(launch, i as ArgIndex) {
                continue;
            }
            let written = t.span(l.device);
            for r in open {
                if r.span.overlaps(&written) {
                    let here = if r.compared {
                        Survival::Differs
                    } else {
                        Survival::Uncompared
                    };
                    survival = survival.max(here);
                }
            }
        }
        survival
    }
}

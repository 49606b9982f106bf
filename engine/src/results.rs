//! The two runs' results compared tensor by tensor: the tensors alive when
//! recording stopped (`results` records) are paired across the runs and
//! their hashes compared. Results that differ make the runs divergent,
//! whatever the launches say: the results decide.
//!
//! A result is paired only with its counterpart: the tensor the other run
//! calls by the same name, the one the aligned launch wrote through the
//! same argument, the same graph input of the same call; only what none of
//! these identifies pairs by view in order, and only with a result of the
//! same origin. A result that still holds what it held when recording
//! began, which no recorded launch wrote, is no result of the recorded
//! region: it is not compared.

use crate::producer::{Origin, ResultWriter};
use crate::sides::Sides;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::hash::Hash;
use tritontui_trace::{LiveTensor, Trace};

/// One result whose bits differ between the runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultDifference {
    /// Index into run A's `Trace::results`.
    pub a: usize,
    /// Index into run B's `Trace::results`.
    pub b: usize,
    /// What last wrote it in run A (unknown when the data flow was not
    /// followed).
    pub writer_a: Option<ResultWriter>,
    /// What last wrote it in run B.
    pub writer_b: Option<ResultWriter>,
    /// The divergence whose differing write the result holds; `None`
    /// makes the difference a root cause of its own.
    pub explained_by: Option<usize>,
}

/// How the runs' results compare.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResultComparison {
    /// Results paired across the runs whose hashes could be compared.
    pub compared: usize,
    /// Results of A and of B left without a counterpart.
    pub unpaired: (usize, usize),
    /// Results of A and of B not compared because they hold what they
    /// held when recording began, written by no recorded launch (in both
    /// runs, where paired): the program had them before the recorded
    /// region.
    pub held: (usize, usize),
    /// The pairs whose bits differ, in run A's order.
    pub differences: Vec<ResultDifference>,
    /// For each result of A, then of B: whether it was paired with a
    /// counterpart holding the same bits, or is held from before the
    /// recorded region (nothing that reached only it changed the results).
    pub settled: (Vec<bool>, Vec<bool>),
    /// For each result of A, then of B: whether it has a counterpart.
    pub paired: (Vec<bool>, Vec<bool>),
}

/// The view of a result that its counterpart must share.
type ViewKey<'t> = (i32, &'t str, &'t [u64], &'t [i64]);

fn view_key<'t>(trace: &'t Trace, t: &LiveTensor) -> ViewKey<'t> {
    let layout = &trace.layouts[t.layout as usize];
    (
        t.device,
        layout.dtype.as_str(),
        layout.shape.as_slice(),
        layout.stride.as_slice(),
    )
}

/// Where a result's bytes came from, for pairing what no identity pairs:
/// only results of the same origin pair by view and order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum OriginClass {
    /// Last written by a recorded launch.
    Launch,
    /// A graph input no recorded launch wrote since.
    GraphInput,
    /// Handed out by an allocation, never written.
    Allocated,
    /// Written by no recorded launch.
    Outside,
    /// Not known (the data flow was not followed).
    Unknown,
}

/// One run's results and what the comparison knows of them.
struct Run<'t> {
    trace: &'t Trace,
    results: &'t [LiveTensor],
    /// What last wrote each result, when the data flow was followed.
    writers: Option<&'t [ResultWriter]>,
    /// For each graph input, how many inputs of the same graph and name
    /// come before it: its call's place among that graph's calls.
    input_calls: Vec<u32>,
}

impl<'t> Run<'t> {
    fn new(
        trace: &'t Trace,
        results: &'t [LiveTensor],
        writers: Option<&'t [ResultWriter]>,
    ) -> Self {
        let input_calls = if writers.is_some() {
            let mut seen: FxHashMap<(&str, &str), u32> = FxHashMap::default();
            trace
                .inputs
                .iter()
                .map(|input| {
                    let count = seen.entry((&input.graph, &input.name)).or_default();
                    *count += 1;
                    *count - 1
                })
                .collect()
        } else {
            Vec::new()
        };
        Run {
            trace,
            results,
            writers,
            input_calls,
        }
    }

    fn origin(&self, i: usize) -> Option<Origin> {
        self.writers.and_then(|w| w.get(i)).map(|w| w.origin)
    }

    fn view(&self, i: usize) -> ViewKey<'t> {
        view_key(self.trace, &self.results[i])
    }

    /// Whether result `i` holds what it held when recording began and no
    /// recorded launch wrote it (where the data flow says).
    fn held(&self, i: usize) -> bool {
        self.results[i].unchanged_since_start()
            && !matches!(
                self.origin(i),
                Some(Origin::Launch(..) | Origin::Allocated(..))
            )
    }

    fn class(&self, i: usize) -> OriginClass {
        match self.origin(i) {
            None => OriginClass::Unknown,
            Some(Origin::Launch(..)) => OriginClass::Launch,
            Some(Origin::GraphInput(_)) => OriginClass::GraphInput,
            Some(Origin::Allocated(..)) => OriginClass::Allocated,
            Some(Origin::Unrecorded | Origin::Scalar) => OriginClass::Outside,
        }
    }

    /// Result `i`'s name, when the program named it, with its view.
    fn name_key(&self, i: usize) -> Option<(&'t str, ViewKey<'t>)> {
        Some((self.results[i].name.as_deref()?, self.view(i)))
    }

    /// The launch that last wrote result `i`, as `counterpart` maps it,
    /// the argument it wrote through, and the view.
    fn writer_key(
        &self,
        i: usize,
        counterpart: &dyn Fn(u32) -> Option<u32>,
    ) -> Option<(u32, u16, ViewKey<'t>)> {
        let Some(Origin::Launch(x, arg)) = self.origin(i) else {
            return None;
        };
        Some((counterpart(x)?, arg, self.view(i)))
    }

    /// The graph, input name and call of the graph input result `i` still
    /// is, if any, with its view.
    fn input_key(&self, i: usize) -> Option<(&'t str, &'t str, u32, ViewKey<'t>)> {
        let Some(Origin::GraphInput(k)) = self.origin(i) else {
            return None;
        };
        let input = self.trace.inputs.get(k as usize)?;
        let call = *self.input_calls.get(k as usize)?;
        Some((&input.graph, &input.name, call, self.view(i)))
    }

    /// What pairs result `i` when no identity does: its origin, whether
    /// it was alive when recording began, and its view; `None` for a
    /// result held from before recording, which has no counterpart to
    /// find this way.
    fn view_key(&self, i: usize) -> Option<(OriginClass, bool, ViewKey<'t>)> {
        let alive_at_start = self.results[i].held_hash.is_some();
        (!self.held(i)).then(|| (self.class(i), alive_at_start, self.view(i)))
    }
}

/// The pairs found so far, and which results of each run have one.
struct Pairing {
    pairs: Vec<(usize, usize)>,
    paired_a: Vec<bool>,
    paired_b: Vec<bool>,
}

impl Pairing {
    /// Pairs each result of A not yet paired with the first result of B
    /// not yet paired under the same key, in the runs' order; a result
    /// whose key is `None` takes no part.
    fn by<K: Hash + Eq>(
        &mut self,
        key_a: impl Fn(usize) -> Option<K>,
        key_b: impl Fn(usize) -> Option<K>,
    ) {
        let mut waiting: FxHashMap<K, VecDeque<usize>> = FxHashMap::default();
        for j in (0..self.paired_b.len()).filter(|&j| !self.paired_b[j]) {
            if let Some(key) = key_b(j) {
                waiting.entry(key).or_default().push_back(j);
            }
        }
        if waiting.is_empty() {
            return;
        }
        for i in 0..self.paired_a.len() {
            if self.paired_a[i] {
                continue;
            }
            let Some(j) = key_a(i)
                .and_then(|key| waiting.get_mut(&key))
                .and_then(VecDeque::pop_front)
            else {
                continue;
            };
            self.pairs.push((i, j));
            self.paired_a[i] = true;
            self.paired_b[j] = true;
        }
    }
}

/// Pairs the runs' results and compares each pair's hashes. With the
/// writers of each run's results (`Flow::result_writers`) and `b_of_a`,
/// the launch of B aligned to a launch of A, a result is paired by what it
/// is: by name, else with the result its counterpart launch last wrote
/// through the same argument, else as the same input of the same call of
/// a graph; the rest pair up by view in the order the runs recorded them,
/// only with results of the same origin (without writers, of any origin).
pub fn compare(
    a: &Trace,
    b: &Trace,
    writers: Option<(&[ResultWriter], &[ResultWriter])>,
    b_of_a: impl Fn(u32) -> Option<u32>,
) -> ResultComparison {
    let (Some(ra), Some(rb)) = (a.results.as_deref(), b.results.as_deref()) else {
        return ResultComparison::default();
    };
    let (wa, wb) = writers.unzip();
    let (run_a, run_b) = (Run::new(a, ra, wa), Run::new(b, rb, wb));
    let mut pairing = Pairing {
        pairs: Vec::new(),
        paired_a: vec![false; ra.len()],
        paired_b: vec![false; rb.len()],
    };
    pairing.by(|i| run_a.name_key(i), |j| run_b.name_key(j));
    pairing.by(
        |i| run_a.writer_key(i, &b_of_a),
        |j| run_b.writer_key(j, &Some),
    );
    pairing.by(|i| run_a.input_key(i), |j| run_b.input_key(j));
    pairing.by(|i| run_a.view_key(i), |j| run_b.view_key(j));

    let Pairing {
        mut pairs,
        paired_a,
        paired_b,
    } = pairing;
    pairs.sort_unstable();
    let mut comparison = ResultComparison {
        settled: (vec![false; ra.len()], vec![false; rb.len()]),
        ..ResultComparison::default()
    };
    for (i, j) in pairs {
        if run_a.held(i) && run_b.held(j) {
            comparison.held.0 += 1;
            comparison.held.1 += 1;
            comparison.settled.0[i] = true;
            comparison.settled.1[j] = true;
            continue;
        }
        let (Some(x), Some(y)) = (ra[i].hash, rb[j].hash) else {
            continue;
        };
        comparison.compared += 1;
        if x == y {
            comparison.settled.0[i] = true;
            comparison.settled.1[j] = true;
        } else {
            comparison.differences.push(ResultDifference {
                a: i,
                b: j,
                writer_a: wa.and_then(|w| w.get(i)).copied(),
                writer_b: wb.and_then(|w| w.get(j)).copied(),
                explained_by: None,
            });
        }
    }
    settle_alike(
        &run_a,
        &run_b,
        &paired_a,
        &paired_b,
        &mut comparison.settled,
    );
    for (run, paired, held, unpaired, settled) in [
        (
            &run_a,
            &paired_a,
            &mut comparison.held.0,
            &mut comparison.unpaired.0,
            &mut comparison.settled.0,
        ),
        (
            &run_b,
            &paired_b,
            &mut comparison.held.1,
            &mut comparison.unpaired.1,
            &mut comparison.settled.1,
        ),
    ] {
        for i in (0..paired.len()).filter(|&i| !paired[i]) {
            if run.held(i) {
                *held += 1;
                settled[i] = true;
            } else {
                *unpaired += 1;
            }
        }
    }
    comparison.paired = (paired_a, paired_b);
    comparison
}

/// Settles each result left without a counterpart that holds the same
/// bits in the same view as a result of the other run also left without
/// one: what a launch one run alone has wrote there is in the other run's
/// results too (a copy made inside the recorded region in one run and
/// before it in the other), so it changes nothing. They are still not
/// compared.
fn settle_alike(
    run_a: &Run<'_>,
    run_b: &Run<'_>,
    paired_a: &[bool],
    paired_b: &[bool],
    settled: &mut (Vec<bool>, Vec<bool>),
) {
    let left = |run: &Run<'_>, paired: &[bool], i: usize| !paired[i] && !run.held(i);
    let mut waiting: FxHashMap<_, VecDeque<usize>> = FxHashMap::default();
    for j in (0..paired_b.len()).filter(|&j| left(run_b, paired_b, j)) {
        if let Some(hash) = run_b.results[j].hash {
            waiting
                .entry((run_b.view(j), hash))
                .or_default()
                .push_back(j);
        }
    }
    for i in (0..paired_a.len()).filter(|&i| left(run_a, paired_a, i)) {
        let Some(hash) = run_a.results[i].hash else {
            continue;
        };
        if let Some(j) = waiting
            .get_mut(&(run_a.view(i), hash))
            .and_then(VecDeque::pop_front)
        {
            settled.0[i] = true;
            settled.1[j] = true;
        }
    }
}

/// The recorded launch that last wrote a differing result (A's, else
/// B's): `(A seq, B seq, kernel)`; `None` when no recorded launch wrote it.
/// (`runs` is a `TracePair`, named by its leaf type: `trace_pair` reads
/// the analysis, which reads this module.)
pub fn result_writer(
    runs: Sides<&Trace>,
    r: &ResultDifference,
) -> Option<(Option<u64>, Option<u64>, String)> {
    let launch = |trace: &Trace, w: Option<ResultWriter>| match w?.origin {
        Origin::Launch(l, _) => {
            let launch = &trace.launches[l as usize];
            Some((launch.seq, trace.kernel_of(launch).name.clone()))
        }
        _ => None,
    };
    let (in_a, in_b) = (launch(runs.a, r.writer_a), launch(runs.b, r.writer_b));
    let kernel = in_a.as_ref().or(in_b.as_ref())?.1.clone();
    Some((in_a.map(|(seq, _)| seq), in_b.map(|(seq, _)| seq), kernel))
}

//! Decides where two runs part and why: classifies every divergent launch,
//! traces divergent inputs to their producers, and separates independent
//! root causes from divergences they explain.

use crate::align::{Alignment, DEFAULT_DEADLINE, Row, Side, align_anchored};
use crate::compare::{Comparer, PairDiff};
use crate::gaps::Gap;
use crate::producer::{Flow, Origin, trace_flow};
use crate::results::ResultComparison;
use crate::signature::{alignment_keys, join};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::time::Duration;
use tritontui_trace::{Access, ArgIndex, Trace};

/// Why a launch diverges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Every input equal, a written argument differs after the launch.
    NondeterministicKernel,
    /// Every input equal, a written argument differs after the launch, and
    /// a numerics setting in force differs between the runs (TF32, say).
    Settings,
    /// A collective (`c10d::allreduce_`, ...) whose inputs on this rank are
    /// equal and whose result differs: another rank sent different data.
    Collective,
    /// Same kernel and inputs, a different config or grid, outputs differ.
    LaunchConfig,
    /// An argument differs before the launch.
    DivergentInput,
    /// Same kernel name, different source, outputs differ.
    Code,
    /// Launches present in one run only, or different argument layouts.
    Structural,
    /// A result differs, and no recorded divergence wrote what it holds:
    /// work the trace did not record did (reports only; no launch pair).
    Result,
}

impl Kind {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::NondeterministicKernel => "nondeterministic-kernel",
            Kind::Settings => "settings",
            Kind::Collective => "collective",
            Kind::LaunchConfig => "launch-config",
            Kind::DivergentInput => "divergent-input",
            Kind::Code => "code",
            Kind::Structural => "structural",
            Kind::Result => "result",
        }
    }
}

/// Where one differing input of a launch came from, in each run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputOrigin {
    /// The argument.
    pub arg: ArgIndex,
    /// Its origin in run A.
    pub a: Origin,
    /// Its origin in run B.
    pub b: Origin,
    /// The divergence that explains this input, if any: its producer's,
    /// or (when `same_outside_value`) the first to read the same outside value.
    pub explained_by: Option<usize>,
    /// The input is an outside value (graph input, unrecorded write) that an
    /// earlier divergence already read.
    pub same_outside_value: bool,
    /// Both runs read the input from a recorded launch whose outputs agree
    /// with its counterpart's, but the two launches are not counterparts:
    /// one run read a later write (an output of a CUDA graph read after the
    /// next replay overwrote it).
    pub overwrite: Option<Overwrite>,
}

/// An input one run read from a later write than the other run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overwrite {
    /// Whether run A read the later write (else run B).
    pub in_a: bool,
    /// In that run, the launch whose write it read.
    pub by: u32,
    /// In that run, the counterpart of the launch whose write the other run
    /// read, when it wrote the bytes read: the write `by` replaced.
    pub replaced: Option<u32>,
}

/// One divergence: a launch pair, or a run of launches present in one run
/// only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// Classification.
    pub kind: Kind,
    /// First aligned row it covers.
    pub row: usize,
    /// Number of rows it covers (more than one for runs of unmatched launches).
    pub rows: usize,
    /// Launch index in run A (the first, for a run of unmatched launches).
    pub a: Option<u32>,
    /// Launch index in run B.
    pub b: Option<u32>,
    /// Launches of A and B in a structural run.
    pub only: (usize, usize),
    /// Arguments that differ: inputs for `divergent-input`, outputs for
    /// output kinds, layouts for `structural`.
    pub args: Vec<ArgIndex>,
    /// For `divergent-input`: the origin of each differing input.
    pub origins: Vec<InputOrigin>,
    /// The upstream divergence and argument that explain this one; `None`
    /// makes it a root cause.
    pub reached_from: Option<(usize, ArgIndex)>,
    /// The root cause this divergence leads back to (itself for a root cause).
    pub root: usize,
    /// The comparison of the pair, for matched rows.
    pub diff: Option<PairDiff>,
    /// Its inputs differ but every output it wrote agrees bit for bit: it
    /// absorbs the difference, and is never a root cause.
    pub absorbed: bool,
    /// Whether its difference reaches the program's results.
    pub impact: Impact,
}

/// Whether a divergence's difference reaches the program's results: the
/// last value of every buffer written in the recorded region that is still
/// live at the end (parameters, gradients, optimizer state, outputs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Impact {
    /// It, or a divergence downstream of it, wrote differing bytes that
    /// are part of the results.
    Reaches,
    /// Every difference it leads to is absorbed before the results: by
    /// these divergences, whose outputs agree (none: overwritten, or no
    /// longer live at the end).
    Absorbed(Vec<usize>),
    /// Launches one run has at its end that the other run's trace lacks
    /// because it ended early: what that run did there was not seen.
    Unseen,
    /// Launches one run alone has whose writes survive only in results
    /// that run alone has (no counterpart to compare with, such as the
    /// static buffers a CUDA graph keeps): nothing says they differ.
    Uncompared,
}

impl Impact {
    /// Whether the difference reaches the results.
    pub fn reaches(&self) -> bool {
        *self == Impact::Reaches
    }
}

/// The verdict on a pair of runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every launch wrote the same bits.
    Identical,
    /// Some launches differ, but every difference is absorbed before the
    /// results, which are bitwise equal.
    Benign,
    /// Some difference reaches the results, or the results differ.
    Divergent,
    /// Nothing seen differs in the results, but a trace did not see
    /// everything (its gaps): the runs cannot be called equal.
    Inconclusive,
}

impl Verdict {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Identical => "identical",
            Verdict::Benign => "benign",
            Verdict::Divergent => "divergent",
            Verdict::Inconclusive => "inconclusive",
        }
    }

    /// Whether the runs' results are shown to agree (exit status 0 of
    /// `diff`): identical or benign.
    pub fn results_agree(self) -> bool {
        matches!(self, Verdict::Identical | Verdict::Benign)
    }
}

impl Divergence {
    /// A divergence of the results not explained by an upstream one.
    pub fn is_root_cause(&self) -> bool {
        self.reached_from.is_none() && !self.absorbed
    }

    /// The input origin to show first: for a root cause, its first
    /// unexplained input; otherwise the input that explains it.
    pub fn primary_origin(&self) -> Option<&InputOrigin> {
        let wanted = self.reached_from.map(|(up, arg)| (Some(up), arg));
        self.origins
            .iter()
            .find(|o| match wanted {
                Some((up, arg)) => o.explained_by == up && o.arg == arg,
                None => o.explained_by.is_none(),
            })
            .or(self.origins.first())
    }
}

/// Per-row outcome, for views that walk the alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowStatus {
    /// Same launch, same bits.
    Equal,
    /// Same bits although the source, config, grid or layout differ.
    Benign,
    /// Part of this divergence (index into `Analysis::divergences`).
    Divergent(u32),
}

/// Tuning knobs of an analysis.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Time the alignment may spend looking for a minimal diff.
    pub align_deadline: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            align_deadline: DEFAULT_DEADLINE,
        }
    }
}

/// The comparison of two runs.
#[derive(Debug)]
pub struct Analysis {
    /// The aligned rows.
    pub alignment: Alignment,
    /// One status per row.
    pub statuses: Vec<RowStatus>,
    /// Divergences in row order.
    pub divergences: Vec<Divergence>,
    /// Program launches (autotuning excluded) in A and B.
    pub launches: (usize, usize),
    /// The runs' results compared tensor by tensor.
    pub results: ResultComparison,
    /// What each trace did not see (A's, B's).
    pub gaps: (Vec<Gap>, Vec<Gap>),
    /// What the differences amount to.
    pub verdict: Verdict,
}

/// The program launches of runs `a` and `b` aligned, without comparing
/// them (what finding one launch's counterpart needs).
pub fn align_runs(a: &Trace, b: &Trace, options: Options) -> Alignment {
    let a_launches = program_launches(a);
    let b_launches = program_launches(b);
    let (a_keys, b_keys) = alignment_keys(a, &a_launches, b, &b_launches);
    // Allocations anchor nothing: a CUDA graph makes them once, at capture.
    let weak = |trace: &Trace, launches: &[u32]| -> Vec<bool> {
        launches
            .iter()
            .map(|&i| trace.kernel_of(&trace.launches[i as usize]).is_allocation())
            .collect()
    };
    let (a_weak, b_weak) = (weak(a, &a_launches), weak(b, &b_launches));
    let side = |keys, launches, weak| Side {
        keys,
        launches,
        weak,
    };
    align_anchored(
        side(&a_keys, &a_launches, &a_weak),
        side(&b_keys, &b_launches, &b_weak),
        options.align_deadline,
    )
}

impl Analysis {
    /// Compares run `a` with run `b`.
    pub fn run(a: &Trace, b: &Trace, options: Options) -> Analysis {
        let alignment = align_runs(a, b, options);
        let (statuses, mut divergences) = classify_rows(a, b, &alignment);
        let rows = (
            rows_of(&alignment, a.launches.len(), Row::a),
            rows_of(&alignment, b.launches.len(), Row::b),
        );
        let b_of_a = |x: u32| match rows.0.get(x as usize) {
            Some(&row) if row != u32::MAX => alignment.rows[row as usize].b(),
            _ => None,
        };
        // Paired by view alone first: the data flow is followed only when
        // something differs.
        let by_view = crate::results::compare(a, b, None, b_of_a);
        let flows = (!divergences.is_empty() || !by_view.differences.is_empty())
            .then(|| explain_inputs((a, b), &alignment, &rows, &statuses, &mut divergences));
        find_roots(&mut divergences);
        let results = match &flows {
            Some((flow_a, flow_b)) => {
                let writers = (&flow_a.result_writers[..], &flow_b.result_writers[..]);
                let mut results = crate::results::compare(a, b, Some(writers), b_of_a);
                explain_results(a, &mut results, &rows, &statuses, &divergences);
                results
            }
            None => by_view,
        };
        let open = (
            OpenResults::of(
                a,
                &results.settled.0,
                &results.paired.0,
                results.unpaired.1 > 0,
            ),
            OpenResults::of(
                b,
                &results.settled.1,
                &results.paired.1,
                results.unpaired.0 > 0,
            ),
        );
        assess_impact((a, b), &alignment, &flows, &open, &mut divergences);
        for d in &mut divergences {
            if cut_short(a, b, &alignment, d).is_some() {
                d.impact = Impact::Unseen;
            }
        }
        let gaps = (crate::gaps::of(a), crate::gaps::of(b));
        let verdict =
            if divergences.iter().any(|d| d.impact.reaches()) || !results.differences.is_empty() {
                Verdict::Divergent
            } else if !gaps.0.is_empty() || !gaps.1.is_empty() {
                Verdict::Inconclusive
            } else if divergences.is_empty() {
                Verdict::Identical
            } else {
                Verdict::Benign
            };
        let launches = (
            alignment.rows.iter().filter(|r| r.a().is_some()).count(),
            alignment.rows.iter().filter(|r| r.b().is_some()).count(),
        );
        Analysis {
            alignment,
            statuses,
            divergences,
            launches,
            results,
            gaps,
            verdict,
        }
    }

    /// Results that differ while no recorded divergence wrote what they
    /// hold: each a root cause of its own (indices into
    /// `results.differences`).
    pub fn unexplained_results(&self) -> impl Iterator<Item = usize> + '_ {
        self.results
            .differences
            .iter()
            .enumerate()
            .filter(|(_, r)| r.explained_by.is_none())
            .map(|(i, _)| i)
    }

    /// The divergence to open on: the earliest root cause whose difference
    /// reaches the results; else the earliest absorbed root cause; else
    /// the earliest divergence.
    pub fn first(&self) -> Option<&Divergence> {
        self.first_index().map(|i| &self.divergences[i])
    }

    /// The index of [`Analysis::first`].
    pub fn first_index(&self) -> Option<usize> {
        let roots = || self.root_causes().map(|(i, _)| i);
        roots()
            .find(|&i| self.divergences[i].impact.reaches())
            .or_else(|| roots().next())
            .or((!self.divergences.is_empty()).then_some(0))
    }

    /// Divergences of the results not explained by an upstream one, in
    /// execution order.
    pub fn root_causes(&self) -> impl Iterator<Item = (usize, &Divergence)> {
        self.divergences
            .iter()
            .enumerate()
            .filter(|(_, d)| d.is_root_cause())
    }

    /// Root causes whose difference reaches the results first, then the
    /// absorbed ones, each in execution order.
    pub fn root_causes_by_impact(&self) -> Vec<usize> {
        let mut roots: Vec<usize> = self.root_causes().map(|(i, _)| i).collect();
        roots.sort_by_key(|&i| (!self.divergences[i].impact.reaches(), i));
        roots
    }

    /// Launches whose inputs differ while their outputs agree.
    pub fn absorbed_count(&self) -> usize {
        self.divergences.iter().filter(|d| d.absorbed).count()
    }
}

fn program_launches(trace: &Trace) -> Vec<u32> {
    trace.program_launches().map(|(i, _)| i as u32).collect()
}

/// Compares every matched pair and groups unmatched runs; inputs are not
/// yet explained.
fn classify_rows(a: &Trace, b: &Trace, alignment: &Alignment) -> (Vec<RowStatus>, Vec<Divergence>) {
    let rows = &alignment.rows;
    // Compare in two halves on two threads; pair comparisons are independent.
    let mid = rows.len() / 2;
    let (first, second) = std::thread::scope(|s| {
        let left = s.spawn(|| compare_rows(a, b, &rows[..mid], 0));
        let right = compare_rows(a, b, &rows[mid..], mid);
        (join(left), right)
    });
    let mut statuses = vec![RowStatus::Equal; rows.len()];
    let mut divergences = Vec::new();
    let mut pairs = first.into_iter().chain(second).peekable();
    let mut row = 0;
    while row < rows.len() {
        if !matches!(rows[row], Row::Both(..)) {
            let start = row;
            while row < rows.len() && !matches!(rows[row], Row::Both(..)) {
                row += 1;
            }
            let index = divergences.len() as u32;
            statuses[start..row].fill(RowStatus::Divergent(index));
            divergences.push(structural_run(a, b, rows, start, row));
            continue;
        }
        if let Some((_, diff)) = pairs.next_if(|(r, _)| *r == row) {
            let collective = rows[row]
                .a()
                .is_some_and(|x| a.kernel_of(&a.launches[x as usize]).is_collective());
            let (mut kind, args) = classify_pair(&diff, collective);
            if kind == Some(Kind::NondeterministicKernel)
                && let (Some(x), Some(y)) = (rows[row].a(), rows[row].b())
            {
                let (sa, sb) = (a.launches[x as usize].seq, b.launches[y as usize].seq);
                if !crate::settings::numerics_differ_at(a, sa, b, sb).is_empty() {
                    kind = Some(Kind::Settings);
                }
            }
            match kind {
                None => statuses[row] = RowStatus::Benign,
                Some(kind) => {
                    statuses[row] = RowStatus::Divergent(divergences.len() as u32);
                    divergences.push(Divergence {
                        kind,
                        row,
                        rows: 1,
                        a: rows[row].a(),
                        b: rows[row].b(),
                        only: (0, 0),
                        args,
                        origins: Vec::new(),
                        reached_from: None,
                        root: 0, // set by find_roots
                        absorbed: kind == Kind::DivergentInput
                            && diff.outputs_agree()
                            && !reads_to_host(a, rows[row]),
                        impact: Impact::Reaches, // set by assess_impact
                        diff: Some(diff),
                    });
                }
            }
        }
        row += 1;
    }
    (statuses, divergences)
}

/// The non-empty comparisons of the matched rows in `rows`, with their row
/// numbers (`offset` is the row number of `rows[0]`).
fn compare_rows(a: &Trace, b: &Trace, rows: &[Row], offset: usize) -> Vec<(usize, PairDiff)> {
    let mut comparer = Comparer::new(a, b);
    rows.iter()
        .enumerate()
        .filter_map(|(i, row)| match *row {
            Row::Both(x, y) => {
                let diff = comparer.compare(x, y);
                (!diff.is_empty()).then_some((offset + i, diff))
            }
            _ => None,
        })
        .collect()
}

/// The kind of a matched pair that differs (`collective`: its kernel is
/// one), and the arguments to name; `None` when its bits agree despite
/// other differences.
fn classify_pair(diff: &PairDiff, collective: bool) -> (Option<Kind>, Vec<ArgIndex>) {
    if !diff.inputs.is_empty() {
        return (Some(Kind::DivergentInput), diff.inputs.clone());
    }
    // With outputs not hashed, a different launch cannot be shown harmless.
    let outputs_differ =
        !diff.outputs.is_empty() || (diff.outputs_unhashed && diff.static_difference());
    if !outputs_differ {
        return (None, Vec::new());
    }
    let kind = if diff.source {
        Kind::Code
    } else if !diff.layout.is_empty() {
        Kind::Structural
    } else if diff.config || diff.grid {
        Kind::LaunchConfig
    } else if collective {
        Kind::Collective
    } else {
        Kind::NondeterministicKernel
    };
    (Some(kind), diff.outputs.clone())
}

/// A run of rows `start..end` with launches in one run only.
fn structural_run(a: &Trace, b: &Trace, rows: &[Row], start: usize, end: usize) -> Divergence {
    let first_a = rows[start..end].iter().find_map(|r| r.a());
    let first_b = rows[start..end].iter().find_map(|r| r.b());
    let only_a = rows[start..end].iter().filter(|r| r.a().is_some()).count();
    // When both runs launched the same kernel here, name the arguments whose
    // shape or dtype differ.
    let mut args = Vec::new();
    if let (Some(x), Some(y)) = (first_a, first_b) {
        let (lx, ly) = (&a.launches[x as usize], &b.launches[y as usize]);
        if a.kernel_of(lx).name == b.kernel_of(ly).name {
            for (i, (p, q)) in a.args_of(lx).zip(b.args_of(ly)).enumerate() {
                use tritontui_trace::ArgRef::Tensor;
                let same = match (p, q) {
                    (Tensor(p), Tensor(q)) => {
                        p.layout.dtype == q.layout.dtype && p.layout.shape == q.layout.shape
                    }
                    (p, q) => std::mem::discriminant(&p) == std::mem::discriminant(&q),
                };
                if !same {
                    args.push(i as ArgIndex);
                }
            }
        }
    }
    Divergence {
        kind: Kind::Structural,
        row: start,
        rows: end - start,
        a: first_a,
        b: first_b,
        only: (only_a, end - start - only_a),
        args,
        origins: Vec::new(),
        reached_from: None,
        root: 0, // set by find_roots
        diff: None,
        absorbed: false,
        impact: Impact::Reaches, // set by assess_impact
    }
}

/// Sets each divergence's root cause, in one pass: whatever reaches a
/// divergence comes before it.
fn find_roots(divergences: &mut [Divergence]) {
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
fn explain_inputs(
    (a, b): (&Trace, &Trace),
    alignment: &Alignment,
    rows: &(Vec<u32>, Vec<u32>),
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
    let ((origins_a, flow_a), (origins_b, flow_b)) = std::thread::scope(|s| {
        let from_a = s.spawn(|| trace_flow(a, &queries_a));
        let from_b = trace_flow(b, &queries_b);
        (join(from_a), from_b)
    });
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
            let explains = |o: Origin, rows: &[u32]| {
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
        let d = &mut divergences[index];
        d.reached_from = first_explained
            .filter(|_| origins.iter().all(|o| o.explained_by.is_some() || stale(o)));
        d.origins = origins;
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
    rows: &(Vec<u32>, Vec<u32>),
    readers: (u32, u32),
    arg: ArgIndex,
    origins: (Origin, Origin),
) -> Option<Overwrite> {
    let (Origin::Launch(pa, _), Origin::Launch(pb, _)) = origins else {
        return None;
    };
    let row_a = *rows.0.get(pa as usize)?;
    let row_b = *rows.1.get(pb as usize)?;
    if row_a == row_b || row_a == u32::MAX || row_b == u32::MAX {
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
    let (start, end) = t.byte_range();
    let launch = &trace.launches[writer as usize];
    let kernel = trace.kernel_of(launch);
    trace.args_of(launch).enumerate().any(|(i, w)| match w {
        ArgRef::Tensor(written) if kernel.wrote(i, &w) => {
            let (from, to) = written.byte_range();
            from < end && start < to
        }
        _ => false,
    })
}

/// For each launch of a run (`side` picks the run's launch in a row), the
/// row it is aligned in (`u32::MAX` for none).
fn rows_of(alignment: &Alignment, launches: usize, side: fn(Row) -> Option<u32>) -> Vec<u32> {
    let mut rows = vec![u32::MAX; launches];
    for (r, row) in alignment.rows.iter().enumerate() {
        if let Some(i) = side(*row) {
            rows[i as usize] = r as u32;
        }
    }
    rows
}

/// Marks each differing result that holds a divergence's differing write
/// (in either run) as explained by that divergence, and each that holds
/// an outside value (a graph input no recorded launch wrote since, bytes
/// no recorded launch wrote) as explained by the first divergence that
/// read that same value.
fn explain_results(
    a: &Trace,
    results: &mut ResultComparison,
    rows: &(Vec<u32>, Vec<u32>),
    statuses: &[RowStatus],
    divergences: &[Divergence],
) {
    // A write that something unrecorded changed since explains nothing.
    let written_by = |writer: Option<crate::producer::ResultWriter>, rows: &[u32]| {
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
    writer_a: Option<crate::producer::ResultWriter>,
    writer_b: Option<crate::producer::ResultWriter>,
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
    writer: Option<crate::producer::ResultWriter>,
    divergences: &[Divergence],
) -> Option<usize> {
    let writer = writer.filter(|w| w.holds != Some(false))?;
    let end = t.ptr.saturating_add(a.layouts[t.layout as usize].span);
    let reads_it = |d: &Divergence, o: &InputOrigin| match (writer.origin, o.a) {
        (Origin::GraphInput(i), Origin::GraphInput(j)) => i == j,
        (Origin::Unrecorded, Origin::Unrecorded) => d.a.is_some_and(|x| {
            let launch = &a.launches[x as usize];
            match a.args_of(launch).nth(usize::from(o.arg)) {
                Some(tritontui_trace::ArgRef::Tensor(arg)) => {
                    let (start, stop) = arg.byte_range();
                    start < end && t.ptr < stop
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

/// Follows every divergence forward through the data flow to the results:
/// a divergence reaches them when it wrote differing bytes that are part
/// of them at the end, or when a divergence it explains does.
fn assess_impact(
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

/// For a run of launches one run alone has at the end of the alignment,
/// when the other run's trace ended early: that run's name (`A`, `B`)
/// and trace, whose missing tail was not seen rather than absent.
pub fn cut_short<'t>(
    a: &'t Trace,
    b: &'t Trace,
    alignment: &Alignment,
    d: &Divergence,
) -> Option<(&'static str, &'t Trace)> {
    let at_end = d.diff.is_none() && d.row + d.rows == alignment.rows.len();
    let short = match d.only {
        (0, _) => ("A", a),
        (_, 0) => ("B", b),
        _ => return None,
    };
    (at_end && short.1.early_end.is_some()).then_some(short)
}

/// Whether the launch of run A in `row` hands what it reads to the host.
fn reads_to_host(a: &Trace, row: Row) -> bool {
    row.a()
        .is_some_and(|x| a.kernel_of(&a.launches[x as usize]).is_host_read())
}

/// Whether a divergence itself put differing values into the results (in
/// either run): wrote differing bytes that are part of them at the end, or
/// handed a differing input to the host.
fn reaches_directly(
    (a, b): (&Trace, &Trace),
    alignment: &Alignment,
    (flow_a, flow_b): (&crate::producer::Survivors, &crate::producer::Survivors),
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
struct OpenResults(Option<Vec<OpenResult>>);

/// One result that is not settled: device, byte range, and whether it
/// differs from the other run's results when written (it is paired, or
/// the other run too has results without a counterpart: a result that
/// changed shape, say). A result only one run has, beside results that
/// all match the other run's (a CUDA graph's static buffers), does not.
struct OpenResult {
    device: i32,
    start: u64,
    end: u64,
    compared: bool,
}

impl OpenResults {
    /// `other_unpaired`: whether the other run has results without a
    /// counterpart.
    fn of(trace: &Trace, settled: &[bool], paired: &[bool], other_unpaired: bool) -> OpenResults {
        let flag = |flags: &[bool], i: usize| flags.get(i).copied().unwrap_or(false);
        OpenResults(trace.results.as_ref().map(|results| {
            results
                .iter()
                .enumerate()
                .filter(|(i, _)| !flag(settled, *i))
                .map(|(i, t)| OpenResult {
                    device: t.device,
                    start: t.ptr,
                    end: t.ptr.saturating_add(trace.layouts[t.layout as usize].span),
                    compared: other_unpaired || flag(paired, i),
                })
                .collect()
        }))
    }

    /// Where the writes of launch `launch` survive among the results.
    fn survival(
        &self,
        trace: &Trace,
        survivors: &crate::producer::Survivors,
        launch: u32,
    ) -> Survival {
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
            let (start, end) = t.byte_range();
            for r in open {
                if r.device == l.device && r.start < end && start < r.end {
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
    rows: &[u32],
    statuses: &[RowStatus],
    divergences: &[Divergence],
) -> Option<usize> {
    let Origin::Launch(launch, arg) = origin else {
        return None;
    };
    let row = *rows.get(launch as usize)?;
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

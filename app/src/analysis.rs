//! Decides where two runs part and why: classifies every divergent launch,
//! traces divergent inputs to their producers, and separates independent
//! root causes from divergences they explain.

use crate::align::{Alignment, DEFAULT_DEADLINE, Row, align};
use crate::compare::{ArgIndex, Comparer, PairDiff, access_of};
use crate::producer::{Origin, find_origins};
use crate::signature::{alignment_keys, join};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::time::Duration;
use tritontui_recorder::{Access, Trace};

/// Why a launch diverges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Every input equal, a written argument differs after the launch.
    NondeterministicKernel,
    /// Same kernel and inputs, a different config or grid, outputs differ.
    LaunchConfig,
    /// An argument differs before the launch.
    DivergentInput,
    /// Same kernel name, different source, outputs differ.
    Code,
    /// Launches present in one run only, or different argument layouts.
    Structural,
}

impl Kind {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::NondeterministicKernel => "nondeterministic-kernel",
            Kind::LaunchConfig => "launch-config",
            Kind::DivergentInput => "divergent-input",
            Kind::Code => "code",
            Kind::Structural => "structural",
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
}

impl Divergence {
    /// Not explained by an upstream divergence.
    pub fn is_root_cause(&self) -> bool {
        self.reached_from.is_none()
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
}

impl Analysis {
    /// Compares run `a` with run `b`.
    pub fn run(a: &Trace, b: &Trace, options: Options) -> Analysis {
        let a_launches = program_launches(a);
        let b_launches = program_launches(b);
        let (a_keys, b_keys) = alignment_keys(a, &a_launches, b, &b_launches);
        let alignment = align(
            &a_keys,
            &a_launches,
            &b_keys,
            &b_launches,
            options.align_deadline,
        );
        drop((a_keys, b_keys));
        let (statuses, mut divergences) = classify_rows(a, b, &alignment);
        explain_inputs(a, b, &alignment, &statuses, &mut divergences);
        find_roots(&mut divergences);
        Analysis {
            alignment,
            statuses,
            divergences,
            launches: (a_launches.len(), b_launches.len()),
        }
    }

    /// The first divergence in execution order.
    pub fn first(&self) -> Option<&Divergence> {
        self.divergences.first()
    }

    /// Divergences not explained by an upstream one.
    pub fn root_causes(&self) -> impl Iterator<Item = (usize, &Divergence)> {
        self.divergences
            .iter()
            .enumerate()
            .filter(|(_, d)| d.is_root_cause())
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
            let (kind, args) = classify_pair(&diff);
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

/// The kind of a matched pair that differs, and the arguments to name;
/// `None` when its bits agree despite other differences.
fn classify_pair(diff: &PairDiff) -> (Option<Kind>, Vec<ArgIndex>) {
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
                use tritontui_recorder::ArgRef::Tensor;
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
/// explained by a divergent producer as reached from it.
fn explain_inputs(
    a: &Trace,
    b: &Trace,
    alignment: &Alignment,
    statuses: &[RowStatus],
    divergences: &mut [Divergence],
) {
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
    if queries_a.is_empty() {
        return;
    }
    let (origins_a, origins_b) = std::thread::scope(|s| {
        let from_a = s.spawn(|| find_origins(a, &queries_a));
        let from_b = find_origins(b, &queries_b);
        (join(from_a), from_b)
    });
    let row_of = |launches: usize, side: fn(Row) -> Option<u32>| {
        let mut rows = vec![u32::MAX; launches];
        for (r, row) in alignment.rows.iter().enumerate() {
            if let Some(i) = side(*row) {
                rows[i as usize] = r as u32;
            }
        }
        rows
    };
    let rows_a = row_of(a.launches.len(), Row::a);
    let rows_b = row_of(b.launches.len(), Row::b);
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
        let mut origins = Vec::with_capacity(args.len());
        for arg in args {
            let Some((oa, ob)) = answers.next() else {
                break;
            };
            let by_producer = explanation(oa, &rows_a, statuses, divergences)
                .or_else(|| explanation(ob, &rows_b, statuses, divergences));
            let by_first_reader = by_producer.is_none().then(|| {
                let key = External::of(a, launch, arg, oa)?;
                let first = *first_reader.entry(key).or_insert(index);
                (first != index).then_some(first)
            });
            origins.push(InputOrigin {
                arg,
                a: oa,
                b: ob,
                explained_by: by_producer.or(by_first_reader.flatten()),
                same_outside_value: by_first_reader.flatten().is_some(),
            });
        }
        // Old bytes of an in/out argument that no recorded launch produced
        // are scratch the kernel writes before it reads (Inductor's
        // in_out_ptr buffers): they do not make a launch a root cause when
        // another of its inputs is explained. Alone, they still do.
        let kernel = a.kernel_of(&a.launches[launch as usize]);
        let stale = |o: &InputOrigin| {
            o.explained_by.is_none()
                && access_of(kernel, usize::from(o.arg)) == Access::Inout
                && matches!(o.a, Origin::Unrecorded | Origin::Allocated(_))
        };
        let first_explained = origins
            .iter()
            .find_map(|o| o.explained_by.map(|up| (up, o.arg)));
        let d = &mut divergences[index];
        d.reached_from = first_explained
            .filter(|_| origins.iter().all(|o| o.explained_by.is_some() || stale(o)));
        d.origins = origins;
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
        use tritontui_recorder::ArgRef;
        let l = &a.launches[launch as usize];
        match (oa, a.args_of(l).nth(usize::from(arg))?) {
            (Origin::Launch(p, parg), _) => Some(External::Overwritten(p, parg)),
            (Origin::Scalar, _) | (_, ArgRef::Scalar(_)) => None,
            (Origin::Allocated(p), _) => Some(External::Overwritten(p, u16::MAX)),
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

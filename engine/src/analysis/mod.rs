//! Decides where two runs part and why, in three passes over the aligned
//! launches: `classify` compares every pair and names each divergence's
//! kind; `origins` traces divergent inputs (and differing results) to the
//! writes they came from and separates independent root causes from the
//! divergences they explain; `impact` follows each divergence forward to
//! the program's results.

mod classify;
mod impact;
mod origins;

use crate::accuracy::Accuracy;
use crate::align::{Alignment, DEFAULT_DEADLINE, Row};
use crate::batch::{BatchComparison, Requests};
use crate::compare::PairDiff;
use crate::fingerprints::FingerprintComparison;
use crate::gaps::Gap;
use crate::producer::Origin;
use crate::programs::ProgramDifferences;
use crate::results::ResultComparison;
use crate::sides::Sides;
use crate::signature::alignment_keys;
use impact::OpenResults;
use serde::Serialize;
use std::time::Duration;
use tritontui_trace::{ArgIndex, Trace};

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
    /// Two different programs' values part past what their arithmetic
    /// allows at this point (reports only: `Analysis::accuracy`).
    Accuracy,
    /// One request's rows differ between a run that batches it alone and
    /// one that batches it with others, while everything the launch read
    /// agrees (reports only: `Analysis::batch`).
    BatchVariant,
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
            Kind::Accuracy => "accuracy",
            Kind::BatchVariant => "batch-variant",
        }
    }

    /// Whether it marks where two programs differ (another source,
    /// config, launch sequence, or settings in force or compiled with)
    /// rather than where one program's bits part: with samples, such a
    /// divergence is judged by its numerics.
    pub fn marks_program_difference(self) -> bool {
        matches!(
            self,
            Kind::Structural | Kind::Code | Kind::LaunchConfig | Kind::Settings
        )
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
    /// Every launch wrote the same bits; for one request compared between
    /// two batchings of it (`Analysis::batch`), every compared launch wrote
    /// the same request rows.
    Identical,
    /// Some launches differ, but every difference is absorbed before the
    /// results, which are bitwise equal; for one request between two
    /// batchings of it, some launch's request rows differ, and the
    /// request's rows of every result agree.
    Benign,
    /// Some difference reaches the results, or the results differ (for one
    /// request between two batchings, the request's rows of a result).
    Divergent,
    /// Nothing seen differs in the results, but a trace did not see
    /// everything (its gaps): the runs cannot be called equal.
    Inconclusive,
    /// Two different programs whose results differ in bits, every aligned
    /// point and differing result within its bound (`Analysis::accuracy`).
    Equivalent,
}

impl Verdict {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Identical => "identical",
            Verdict::Benign => "benign",
            Verdict::Divergent => "divergent",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Equivalent => "equivalent",
        }
    }

    /// Whether the runs' results are shown to agree (exit status 0 of
    /// `diff`): identical, benign, or equivalent as far as the arithmetic
    /// allows.
    pub fn results_agree(self) -> bool {
        matches!(
            self,
            Verdict::Identical | Verdict::Benign | Verdict::Equivalent
        )
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
    /// Whether two different programs whose traces hold samples are
    /// judged by their numerics (`accuracy`, `equivalent`); off where one
    /// program runs twice and owes equal bits (`check`).
    pub compare_numerics: bool,
    /// Which request of each run to compare by its rows, where both traces
    /// hold row hashes (`rows`).
    pub requests: Requests,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            align_deadline: DEFAULT_DEADLINE,
            compare_numerics: true,
            requests: Requests::default(),
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
    pub gaps: Sides<Vec<Gap>>,
    /// What makes the runs two programs, as far as their traces say.
    pub programs: ProgramDifferences,
    /// The two programs' numerics compared, when both traces hold samples
    /// and the runs ran different programs.
    pub accuracy: Option<Accuracy>,
    /// One request's rows compared, when both traces hold row hashes
    /// (`rows`) and their batch extents are known or found.
    pub batch: Option<BatchComparison>,
    /// The runs' fingerprints compared, when a trace holds any (recorded
    /// with `fingerprint`): where the runs first part, by step.
    pub fingerprints: Option<FingerprintComparison>,
    /// What the differences amount to.
    pub verdict: Verdict,
}

/// The shape of run `t`'s result `i`, if the trace records it.
fn result_shape(t: &Trace, i: usize) -> Option<&[u64]> {
    let result = t.results.as_ref().and_then(|r| r.get(i))?;
    t.layouts.get(result.layout as usize).map(|l| &l.shape[..])
}

/// The program launches of runs `a` and `b` aligned, without comparing
/// them (what finding one launch's counterpart needs).
pub fn align_runs(a: &Trace, b: &Trace, options: Options) -> Alignment {
    crate::align::align_by(a, b, alignment_keys, options.align_deadline)
}

impl Analysis {
    /// Compares run `a` with run `b`.
    pub fn run(a: &Trace, b: &Trace, options: Options) -> Analysis {
        Self::run_against(a, b, None, options)
    }

    /// Compares run `a` with run `b`, two programs' numerics checked
    /// against a `reference` run (the program in float64) where given.
    pub fn run_against(
        a: &Trace,
        b: &Trace,
        reference: Option<&Trace>,
        options: Options,
    ) -> Analysis {
        let alignment = align_runs(a, b, options);
        let (statuses, mut divergences) = classify::classify_rows(a, b, &alignment);
        let rows = (
            LaunchRows::of(&alignment, a.launches.len(), Row::a),
            LaunchRows::of(&alignment, b.launches.len(), Row::b),
        );
        let b_of_a = |x: u32| {
            rows.0
                .row(x)
                .and_then(|row| alignment.rows[row as usize].b())
        };
        // Paired by view alone first: the data flow is followed only when
        // something differs.
        let by_view = crate::results::compare(a, b, None, b_of_a);
        let flows = (!divergences.is_empty() || !by_view.differences.is_empty()).then(|| {
            origins::explain_inputs((a, b), &alignment, &rows, &statuses, &mut divergences)
        });
        origins::find_roots(&mut divergences);
        let results = match &flows {
            Some((flow_a, flow_b)) => {
                let writers = (&flow_a.result_writers[..], &flow_b.result_writers[..]);
                let mut results = crate::results::compare(a, b, Some(writers), b_of_a);
                origins::explain_results(a, &mut results, &rows, &statuses, &divergences);
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
        impact::assess_impact((a, b), &alignment, &flows, &open, &mut divergences);
        for d in &mut divergences {
            if cut_short(a, b, &alignment, d).is_some() {
                d.impact = Impact::Unseen;
            }
        }
        let gaps = Sides {
            a: crate::gaps::of(a),
            b: crate::gaps::of(b),
        };
        let programs = ProgramDifferences::of(a, b);
        let accuracy = (options.compare_numerics && programs.any())
            .then(|| Accuracy::of(a, b, &results, reference))
            .flatten();
        let batch = BatchComparison::of(
            a,
            b,
            options.requests,
            options.align_deadline,
            flows.as_ref().map(|(flow_a, _)| &flow_a.result_writers[..]),
        );
        let fingerprints = FingerprintComparison::of(a, b);
        let fingerprints_part = fingerprints
            .as_ref()
            .is_some_and(|f| f.first_difference.is_some());
        let gapless = gaps.a.is_empty() && gaps.b.is_empty();
        // A result of one shape in both runs (the request's own output)
        // that differs outweighs any launch's rows.
        let only_shapes_differ = results
            .differences
            .iter()
            .all(|d| result_shape(a, d.a) != result_shape(b, d.b));
        let rows_identical =
            batch.as_ref().is_some_and(BatchComparison::rows_identical) && only_shapes_differ;
        // Whether the request's rows of the results agree, where each
        // result was judged and they part, or some launch's request rows
        // part on the way: then where the runs part is the program's other
        // shapes, and the request's results decide.
        let request_results_agree = batch.as_ref().and_then(|batch| {
            let agree = batch.results.agree()? && only_shapes_differ;
            let variant = batch.root_cause.is_some() || batch.differing > 0;
            (!agree || variant).then_some(agree)
        });
        let verdict = if rows_identical && gapless {
            // The request's rows are what the two batchings are compared by.
            Verdict::Identical
        } else if fingerprints_part {
            // Steps that ran apart before what was recorded in full.
            Verdict::Divergent
        } else if let Some(agree) = request_results_agree {
            match (agree, gapless) {
                (false, _) => Verdict::Divergent,
                (true, false) => Verdict::Inconclusive,
                (true, true) => Verdict::Benign,
            }
        } else if divergences.iter().any(|d| d.impact.reaches()) || !results.differences.is_empty()
        {
            match &accuracy {
                Some(accuracy) if accuracy.within_bounds() && gapless => Verdict::Equivalent,
                _ => Verdict::Divergent,
            }
        } else if !gaps.a.is_empty() || !gaps.b.is_empty() {
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
            programs,
            accuracy,
            batch,
            fingerprints,
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
    /// execution order. When two programs' numerics are compared
    /// (`accuracy`), or one request's rows between two batchings of it
    /// (`batch`), where the programs differ is no root cause: their
    /// numerics, or the request's rows, say whether it matters.
    pub fn root_causes(&self) -> impl Iterator<Item = (usize, &Divergence)> {
        self.divergences
            .iter()
            .enumerate()
            .filter(|(_, d)| self.is_root_cause(d))
    }

    /// Whether `d` is a root cause of this comparison (see
    /// [`Analysis::root_causes`]).
    pub fn is_root_cause(&self, d: &Divergence) -> bool {
        d.is_root_cause() && !(self.judges_programs() && d.kind.marks_program_difference())
    }

    /// Whether where the programs differ is judged by something else than
    /// their bits: their numerics (`accuracy`) or a request's rows (`batch`).
    fn judges_programs(&self) -> bool {
        self.accuracy.is_some() || self.batch.is_some()
    }

    /// Where the programs differ, when their numerics or a request's rows
    /// are compared: the
    /// divergences that would otherwise be root causes of their own.
    pub fn program_differences(&self) -> impl Iterator<Item = (usize, &Divergence)> {
        self.divergences.iter().enumerate().filter(|(_, d)| {
            self.judges_programs() && d.is_root_cause() && d.kind.marks_program_difference()
        })
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

/// For each launch of one run, the aligned row it is in.
struct LaunchRows(Vec<u32>);

impl LaunchRows {
    /// Marks a launch in no row (filtered out of the alignment).
    const NONE: u32 = u32::MAX;

    /// The rows of `launches` launches of the run `side` picks in a row.
    fn of(alignment: &Alignment, launches: usize, side: fn(Row) -> Option<u32>) -> LaunchRows {
        let mut rows = vec![Self::NONE; launches];
        for (r, row) in alignment.rows.iter().enumerate() {
            if let Some(i) = side(*row) {
                rows[i as usize] = r as u32;
            }
        }
        LaunchRows(rows)
    }

    /// The row launch `launch` is aligned in, if any.
    fn row(&self, launch: u32) -> Option<u32> {
        self.0
            .get(launch as usize)
            .copied()
            .filter(|&r| r != Self::NONE)
    }
}

/// For a structural run of launches both runs have some of, the kernels
/// each run launches there that the other does not, in the order first
/// launched, each once (the names Inductor gave them say what each fuses:
/// `cpp_fused_add_gelu_3` where the other run has
/// `cpp_fused_add_gelu_round_3`); allocations, which compute nothing, left
/// out. Empty sides for a run one side alone has, or a pair of launches.
pub fn kernels_only_in<'t>(
    a: &'t Trace,
    b: &'t Trace,
    alignment: &Alignment,
    d: &Divergence,
) -> Sides<Vec<&'t str>> {
    if d.diff.is_some() || d.only.0 == 0 || d.only.1 == 0 {
        return Sides::default();
    }
    let end = (d.row + d.rows).min(alignment.rows.len());
    let stretch = &alignment.rows[d.row.min(end)..end];
    let kernels = |trace: &'t Trace, side: fn(Row) -> Option<u32>| -> Vec<&'t str> {
        stretch
            .iter()
            .filter_map(|&row| side(row))
            .map(|i| trace.kernel_of(&trace.launches[i as usize]))
            .filter(|kernel| !kernel.is_allocation())
            .map(|kernel| kernel.name.as_str())
            .collect()
    };
    let (in_a, in_b) = (kernels(a, Row::a), kernels(b, Row::b));
    let only_in = |mine: &[&'t str], theirs: &[&str]| {
        let mut out: Vec<&'t str> = Vec::new();
        for &name in mine {
            if !theirs.contains(&name) && !out.contains(&name) {
                out.push(name);
            }
        }
        out
    };
    Sides {
        a: only_in(&in_a, &in_b),
        b: only_in(&in_b, &in_a),
    }
}

/// For a run of launches one run alone has at the end of the alignment,
/// when the other run's trace ended early or its program raised: that
/// run's name (`A`, `B`) and trace, whose missing tail was not seen (or
/// not run) rather than left out.
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
    (at_end && short.1.stopped_short()).then_some(short)
}

//! The result of `tritontui diff` as data: the JSON report for scripts
//! (`docs/diff-json.md` documents it), which the summary (`summary`) and
//! the HTML page (`html`) are made from.

use super::rows::RowsReport;
use crate::values::TensorValues;
use crate::words::{divergence_words, impact_words, origin_words, result_name, result_words};
use serde::Serialize;
use tritontui_engine::Sides;
use tritontui_engine::TracePair;
use tritontui_engine::accuracy::fused::{FusedOp, ops_only};
use tritontui_engine::accuracy::{Accuracy, AlignedPoint};
use tritontui_engine::analysis::{Analysis, Divergence, Impact, Kind, Verdict};
use tritontui_engine::batch::BatchComparison;
use tritontui_engine::gaps::{Gap, GapKind};
use tritontui_engine::producer::Origin;
use tritontui_engine::results::result_writer;
use tritontui_trace::{ArgIndex, Trace};

/// Version of the JSON report's shape.
pub const REPORT_VERSION: u32 = 4;

/// The whole `diff --json` document.
#[derive(Debug, Serialize)]
pub struct Report {
    /// Shape version of this document.
    pub report_version: u32,
    /// `identical`, `benign` (differences absorbed before the results),
    /// `divergent` (some difference reaches the results, or the results
    /// differ), `inconclusive` (nothing seen differs, but a trace has gaps)
    /// or `equivalent` (two different programs whose results differ in
    /// bits, every aligned point within its bound: `accuracy`).
    pub verdict: Verdict,
    /// Two different programs' numerics compared, when both traces hold
    /// samples (`record --samples`); null otherwise.
    pub accuracy: Option<AccuracyReport>,
    /// One request compared by its rows, when both traces hold row hashes
    /// (`record --rows`) and their batch extents are known or found; null
    /// otherwise.
    pub batch: Option<super::batch::BatchReport>,
    /// The runs' fingerprints compared, when a trace holds any (recorded
    /// with `fingerprint`, or before `from_step`); null otherwise.
    pub fingerprints: Option<FingerprintReport>,
    /// What each trace did not see; any gap forbids `identical` and `benign`.
    #[serde(serialize_with = "said_gaps")]
    pub gaps: Sides<Vec<Gap>>,
    /// The two traces.
    pub runs: Sides<RunInfo>,
    /// The runs' settings that differ (versions, devices, numerics flags,
    /// non-default configs, environment variables): often the answer.
    pub settings: Vec<tritontui_engine::settings::SettingDiff>,
    /// Recompilations (with the guards that failed) and graph breaks (with
    /// their reasons) in one run only: why the runs compiled different
    /// programs.
    pub compile_differences: Vec<tritontui_engine::compile_events::CompileDifference>,
    /// What makes the runs two programs (compiled graphs, kernels one run
    /// alone launched, kernels of one name from other sources).
    pub programs: tritontui_engine::programs::ProgramDifferences,
    /// Program launch counts (autotuning launches excluded).
    pub launches: Counts,
    /// CUDA graph replays each run recorded (their launches are among the
    /// launches, compared as any other).
    pub cuda_graph_replays: Sides<usize>,
    /// `minimal`, or `approximate` if the alignment ran out of time.
    pub alignment: &'static str,
    /// Whether each run recorded its results (else every last write counts).
    pub results_recorded: Sides<bool>,
    /// The runs' results compared tensor by tensor.
    pub results: ResultsCompared,
    /// The results whose bits differ, with what last wrote them.
    pub result_differences: Vec<ResultDifferenceReport>,
    /// The divergence to start from: the earliest root cause that reaches
    /// the results (for `benign`, the earliest absorbed one).
    pub first_divergence: Option<DivergenceReport>,
    /// Divergences of the results not explained by an upstream divergence:
    /// those that reach the results first, then absorbed ones.
    pub root_causes: Vec<DivergenceReport>,
    /// Number of divergences in all, absorbing launches included.
    pub divergence_count: usize,
    /// Launches whose inputs differ while every output agrees.
    pub absorbed_count: usize,
    /// Every divergence in execution order, up to the limit asked for.
    pub divergences: Vec<DivergenceReport>,
    /// True when `divergences` was cut at the limit.
    pub divergences_truncated: bool,
}

/// Two runs' fingerprints compared (`Analysis::fingerprints`).
#[derive(Debug, Clone, Serialize)]
pub struct FingerprintReport {
    /// How many fingerprints each run recorded.
    pub counts: Sides<usize>,
    /// How many steps each run's fingerprints cover, when known.
    pub steps: Sides<Option<u64>>,
    /// The first fingerprint that differs: null when all agree.
    pub first_difference: Option<FingerprintDifferenceReport>,
    /// The same in words.
    pub detail: Vec<String>,
}

/// The first fingerprint two runs recorded differently.
#[derive(Debug, Clone, Serialize)]
pub struct FingerprintDifferenceReport {
    /// The step it was recorded in, when steps are known.
    pub step: Option<u64>,
    /// Which fingerprint of its step, from 0.
    pub in_step: usize,
    /// Its launch (sequence number) in each run; null where that run's
    /// fingerprints had ended.
    pub launches: Sides<Option<u64>>,
    /// What it is: `graph call ...`, `the state at the step's end`, `host
    /// read ...`, `collective ...`.
    pub what: String,
    /// How it differs: `calls` (different calls: the runs took different
    /// paths), `values` (with the differing tensors' names) or `ended`.
    pub parted: &'static str,
    /// The names of the tensors hashed differently (for `values`).
    pub tensors: Vec<String>,
}

/// Two different programs' numerics compared (`Analysis::accuracy`).
#[derive(Debug, Clone, Serialize)]
pub struct AccuracyReport {
    /// Points (written floating tensors with samples) in each run.
    pub points: Sides<usize>,
    /// The bound's rule, in words.
    pub rule: String,
    /// What the numerics say, a line each (as `diff` prints them).
    pub detail: Vec<String>,
    /// The first aligned point past its bound, the root cause of kind
    /// `accuracy`; null when every point is within, or when a reference
    /// run puts every differing result within the minifier's rule.
    pub first_past_bound: Option<PointReport>,
    /// Against a reference run, every differing result is within the
    /// accuracy minifier's rule (points past it before them are absorbed).
    pub results_within_reference: bool,
    /// Differing results whose last write has no samples in one run (not
    /// judged; they forbid `equivalent`).
    pub unsampled_results: Vec<String>,
    /// The reference run's points, with `--reference`; else null.
    pub reference_points: Option<usize>,
    /// Where the runs start to draw other random numbers: each run's draw
    /// (`{a, b}`, sequence numbers; null for a run that drew no more);
    /// null when they draw the same. Points written from there on are not
    /// judged (`drawn_apart`).
    pub random_parting: Option<Sides<Option<u64>>>,
    /// The aligned points in run B's order, then the differing results,
    /// up to the report's limit.
    pub aligned: Vec<PointReport>,
    /// True when `aligned` was cut at the limit.
    pub aligned_truncated: bool,
}

/// One aligned point: the same tensor in both programs, the error between
/// them (estimated from their samples) and its bound.
#[derive(Debug, Clone, Serialize)]
pub struct PointReport {
    /// Sequence number of the launch of A that wrote it.
    pub a_index: u64,
    /// That launch's kernel.
    pub a_kernel: String,
    /// The argument it wrote it through.
    pub a_arg: String,
    /// The `nn.Module` path whose op wrote it, when the trace says (an
    /// eager op recorded with samples, or a compiled kernel whose compile
    /// was recorded; empty for the outermost module).
    pub a_module: Option<String>,
    /// Every module whose ops computed it in that launch, in the graph's
    /// order, `a_module` last: a compiled kernel fuses ops of several.
    pub a_modules: Vec<String>,
    /// Sequence number of the launch of B.
    pub b_index: u64,
    /// See `a_kernel`.
    pub b_kernel: String,
    /// See `a_arg`.
    pub b_arg: String,
    /// See `a_module`.
    pub b_module: Option<String>,
    /// See `a_modules`.
    pub b_modules: Vec<String>,
    /// The aten ops (with their modules) A's kernel computes and B's does
    /// not, where both kernels' compiles are in their traces.
    pub a_only_ops: Vec<FusedOp>,
    /// The ops B's kernel computes and A's does not.
    pub b_only_ops: Vec<FusedOp>,
    /// The result both runs hold it as, for a differing result.
    pub result: Option<String>,
    /// The coarser of the two runs' dtypes.
    pub dtype: String,
    /// Its element count.
    pub numel: u64,
    /// `‖a − b‖₂ / max(‖a‖₂, ‖b‖₂)` over the samples.
    pub relative_error: f64,
    /// The root mean square of `a − b` over the samples.
    pub rms_error: f64,
    /// The largest `|a − b|` of a sample.
    pub max_abs_error: f64,
    /// That difference in units in the last place of `dtype`.
    pub ulps: f64,
    /// The largest relative error of what B's launch read.
    pub upstream_error: f64,
    /// The largest absolute (root mean square) error of what it read.
    pub upstream_rms_error: f64,
    /// The relative error it may carry.
    pub bound: f64,
    /// The absolute (root mean square) error it may carry.
    pub rms_bound: f64,
    /// Whether its error is past its bound.
    pub past_bound: bool,
    /// Whether, past its bound, it is a root cause (its launch read the
    /// same bits in both runs, or a reference run judges it); else a
    /// point past its bound is a suspect.
    pub accountable: bool,
    /// Whether it was written once the runs' random numbers parted
    /// (`random_parting`): not judged, never past its bound.
    pub drawn_apart: bool,
    /// Against a reference run (`--reference`): each run's root mean
    /// square error against it and what run B's may be
    /// (`{error_a, error_b, bound}`); this decides `past_bound`. Null
    /// without a reference, or where it has no counterpart.
    pub reference: Option<tritontui_engine::accuracy::reference::ReferenceCheck>,
}

/// The CUDA graph replay a launch ran in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct InReplay {
    /// The graph's id in its trace.
    pub graph: u64,
    /// Which replay of it, from 0.
    pub replay: u64,
}

/// How many results were compared, and how many differ.
#[derive(Debug, Serialize)]
pub struct ResultsCompared {
    /// Pairs of results whose hashes were compared.
    pub compared: usize,
    /// Pairs whose bits differ.
    pub differ: usize,
    /// Results of A with no counterpart in B.
    pub unpaired_a: usize,
    /// Results of B with no counterpart in A.
    pub unpaired_b: usize,
    /// Results of A not compared because they hold what they held when
    /// recording began and no recorded launch wrote them.
    pub held_a: usize,
    /// The same in B.
    pub held_b: usize,
}

/// A result whose bits differ between the runs.
#[derive(Debug, Clone, Serialize)]
pub struct ResultDifferenceReport {
    /// Its place among run A's results (`results` records, in order).
    pub a_result: usize,
    /// Its counterpart's place among run B's.
    pub b_result: usize,
    /// `dtype[shape] on device`.
    pub tensor: String,
    /// What the program calls it (`layers.0.weight.grad`), if it names it.
    pub name: Option<String>,
    /// Its hash at the end in A and in B, as hex.
    pub a_hash: Option<String>,
    /// See `a_hash`.
    pub b_hash: Option<String>,
    /// The recorded launch that last wrote it, if one did.
    pub last_writer: Option<LaunchRef>,
    /// The divergence whose differing write it holds; null makes it a
    /// root cause of its own (kind `result`).
    pub explained_by: Option<LaunchRef>,
    /// What differs and what last wrote it, in words.
    pub detail: String,
}

/// What a report says about one trace.
#[derive(Debug, Serialize)]
pub struct RunInfo {
    /// The trace file.
    pub path: String,
    /// torch version recorded in the header.
    pub torch: Option<String>,
    /// triton version recorded in the header.
    pub triton: Option<String>,
    /// Device names.
    pub devices: Vec<String>,
    /// Whether the trace has its end record.
    pub complete: bool,
    /// How it ended early: `truncated at byte N` or `no end record`.
    pub ended_early: Option<String>,
    /// What the program raised as it ended, when it ended with an
    /// exception it did not catch (`RuntimeError: boom`).
    pub raised: Option<String>,
}

/// Where a divergence's difference ends, as the report names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reach {
    /// Some of its difference reaches the results.
    ReachesResults,
    /// All of it is absorbed before the results.
    Absorbed,
    /// Launches the other run's trace did not see: it ended early.
    Unseen,
    /// Launches one run alone has, whose writes survive only in results
    /// without a counterpart in the other run.
    Uncompared,
}

impl Reach {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Reach::ReachesResults => "reaches-results",
            Reach::Absorbed => "absorbed",
            Reach::Unseen => "unseen",
            Reach::Uncompared => "uncompared",
        }
    }
}

/// Launch counts.
#[derive(Debug, Serialize)]
pub struct Counts {
    /// Program launches in A.
    pub a: usize,
    /// Program launches in B.
    pub b: usize,
    /// Launches aligned to a launch of the other run.
    pub matched: usize,
}

/// A launch named in a report.
#[derive(Debug, Clone, Serialize)]
pub struct LaunchRef {
    /// Sequence number in A, or null.
    pub a_index: Option<u64>,
    /// Sequence number in B, or null.
    pub b_index: Option<u64>,
    /// Kernel name.
    pub kernel: String,
}

/// The launch that last wrote a divergent input.
#[derive(Debug, Clone, Serialize)]
pub struct Producer {
    /// Sequence number of the producer in A, or null if A has none.
    pub a_index: Option<u64>,
    /// Sequence number of the producer in B, or null if B has none.
    pub b_index: Option<u64>,
    /// Producer's kernel name.
    pub kernel: String,
    /// The producer's argument that wrote the bytes.
    pub arg: String,
}

/// An input one run read from a later write than the other run did.
#[derive(Debug, Clone, Serialize)]
pub struct OverwriteReport {
    /// The run that read the later write: `a` or `b`.
    pub run: &'static str,
    /// Sequence number, in that run, of the launch whose write it read.
    pub by: u64,
    /// The CUDA graph replay that launch ran in, if any.
    pub by_replay: Option<InReplay>,
    /// Sequence number, in that run, of the write it replaced: the
    /// counterpart of the launch whose write the other run read; null when
    /// that counterpart wrote elsewhere.
    pub replaced: Option<u64>,
    /// The CUDA graph replay the replaced write ran in, if any.
    pub replaced_replay: Option<InReplay>,
    /// Both writes ran in replays of two CUDA graphs captured from one
    /// memory pool.
    pub shared_pool: bool,
}

/// One divergence.
#[derive(Debug, Clone, Serialize)]
pub struct DivergenceReport {
    /// Classification.
    pub kind: Kind,
    /// A divergence of the results not explained by an upstream divergence.
    pub root_cause: bool,
    /// Its inputs differ, every output agrees: it absorbs the difference.
    pub absorbed: bool,
    /// Whether its difference reaches the results.
    pub impact: Reach,
    /// For `absorbed` impact: the launches that absorb its difference.
    pub absorbed_by: Vec<LaunchRef>,
    /// Sequence number of the launch in A (the first, for a structural run),
    /// or null if only B has it.
    pub a_index: Option<u64>,
    /// Sequence number in B, or null.
    pub b_index: Option<u64>,
    /// The training step its launch ran in (A's, else B's), where the
    /// trace says (`step` records); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    /// Kernel name.
    pub kernel: String,
    /// Names of the arguments that differ.
    pub args: Vec<String>,
    /// Which rows of each differing argument differ after the launch,
    /// where both traces hold its row hashes (`record --rows`); absent
    /// otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<RowsReport>,
    /// For `divergent-input`: the launch that last wrote the first differing
    /// input, or null if no recorded launch did.
    pub producer: Option<Producer>,
    /// For `divergent-input`: where the first differing input came from, in words.
    pub origin: Option<String>,
    /// For `divergent-input`: the first differing input, when one run read
    /// it from a later write than the other run did (an output of a CUDA
    /// graph read after the next replay overwrote it); null otherwise.
    pub overwritten: Option<OverwriteReport>,
    /// The CUDA graph replay each run's launch ran in (null for a launch
    /// that ran on its own, or a side without the launch).
    pub in_replay: Sides<Option<InReplay>>,
    /// For `code` and `launch-config`: the Inductor config entries that
    /// differ between the compiles that made the two kernels (empty when
    /// none does); null for other kinds, or when a trace does not say.
    pub compile_settings: Option<Vec<tritontui_engine::settings::SettingDiff>>,
    /// For `structural`: launches only in A and only in B in this run.
    pub only_in_a: usize,
    /// See `only_in_a`.
    pub only_in_b: usize,
    /// The upstream divergence that explains this one; null for root causes.
    pub reached_from: Option<LaunchRef>,
    /// The root cause this divergence leads back to (itself for a root cause).
    pub root: LaunchRef,
    /// The verdict in words.
    pub detail: String,
    /// Where its difference ends, in words.
    pub impact_detail: String,
    /// The launch's values in both runs compared, when both captured it
    /// (`record --capture`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<TensorValues>>,
    /// Why the captured values could not be compared; absent when they
    /// were, or when none were captured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values_error: Option<String>,
}

/// Each run's gaps as `{kind, detail}`, the detail in words.
fn said_gaps<S: serde::Serializer>(gaps: &Sides<Vec<Gap>>, to: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Said {
        kind: GapKind,
        detail: String,
    }
    let said = |side: &[Gap]| -> Vec<Said> {
        side.iter()
            .map(|gap| Said {
                kind: gap.kind(),
                detail: crate::words::gap(gap),
            })
            .collect()
    };
    Sides {
        a: said(&gaps.a),
        b: said(&gaps.b),
    }
    .serialize(to)
}

impl Report {
    /// Builds the report, listing at most `limit` divergences in `divergences`.
    pub fn new(a: &Trace, b: &Trace, analysis: &Analysis, limit: usize) -> Report {
        let runs = TracePair { a, b };
        // A divergence may be listed thrice (first, root cause, in order):
        // those of the first and the listed ones, at most `limit` + 1, are
        // made once (their words, their captured values read).
        let listed = analysis.divergences.len().min(limit);
        let first = analysis.first_index();
        let made = std::cell::RefCell::new(rustc_hash::FxHashMap::default());
        let entry = |i: usize| {
            if i >= listed && Some(i) != first {
                return divergence_report(runs, analysis, i);
            }
            made.borrow_mut()
                .entry(i)
                .or_insert_with(|| divergence_report(runs, analysis, i))
                .clone()
        };
        let result_differences: Vec<ResultDifferenceReport> = analysis
            .results
            .differences
            .iter()
            .map(|r| result_difference_report(runs, analysis, r))
            .collect();
        // Runs recorded only as fingerprints wrote their results in launches
        // recorded by no record of their own: where the fingerprints part
        // says more than a result nobody recorded writing.
        let fingerprints_only = analysis.fingerprints.is_some() && analysis.launches == (0, 0);
        let result_roots: Vec<DivergenceReport> = result_differences
            .iter()
            .filter(|r| r.explained_by.is_none() && !fingerprints_only)
            .map(result_root_cause)
            .collect();
        let mut root_causes: Vec<DivergenceReport> = analysis
            .root_causes_by_impact()
            .into_iter()
            .map(entry)
            .collect();
        // Result root causes come after the launches whose differences
        // reach the results, before the absorbed ones.
        let reaching = root_causes
            .iter()
            .take_while(|r| r.impact == Reach::ReachesResults)
            .count();
        root_causes.splice(reaching..reaching, result_roots.iter().cloned());
        let mut first_divergence = match first {
            Some(i) if analysis.divergences[i].impact.reaches() => Some(entry(i)),
            _ => result_roots.first().cloned().or_else(|| first.map(entry)),
        };
        let accuracy = analysis
            .accuracy
            .as_ref()
            .map(|accuracy| accuracy_report(runs, accuracy, limit));
        // Two programs' values parting past their bound come first: the
        // earliest place the numerics say matters.
        if let Some(past) = analysis.accuracy.as_ref().and_then(|x| x.first_past()) {
            let root = accuracy_root_cause(runs, past);
            root_causes.insert(0, root.clone());
            first_divergence = Some(root);
        }
        // So does the first launch that makes a request depend on its batch.
        let batch = analysis.batch.as_ref().map(|batch| {
            if let Some(root) = batch_root_cause(runs, batch, analysis.verdict) {
                root_causes.insert(0, root.clone());
                first_divergence = Some(root);
            }
            super::batch::BatchReport::new(runs, batch)
        });
        let fingerprints = analysis
            .fingerprints
            .as_ref()
            .map(|f| fingerprint_report(runs, f));
        Report {
            report_version: REPORT_VERSION,
            verdict: analysis.verdict,
            fingerprints,
            accuracy,
            batch,
            gaps: analysis.gaps.clone(),
            results_recorded: Sides {
                a: a.results.is_some(),
                b: b.results.is_some(),
            },
            results: ResultsCompared {
                compared: analysis.results.compared,
                differ: analysis.results.differences.len(),
                unpaired_a: analysis.results.unpaired.0,
                unpaired_b: analysis.results.unpaired.1,
                held_a: analysis.results.held.0,
                held_b: analysis.results.held.1,
            },
            result_differences,
            runs: Sides {
                a: run_info(a),
                b: run_info(b),
            },
            settings: tritontui_engine::settings::differences(&a.header, &b.header),
            compile_differences: tritontui_engine::compile_events::differences(a, b),
            programs: analysis.programs.clone(),
            launches: Counts {
                a: analysis.launches.0,
                b: analysis.launches.1,
                matched: analysis.alignment.matched,
            },
            cuda_graph_replays: Sides {
                a: a.replays.len(),
                b: b.replays.len(),
            },
            alignment: if analysis.alignment.minimal {
                "minimal"
            } else {
                "approximate"
            },
            first_divergence,
            root_causes,
            divergence_count: analysis.divergences.len(),
            absorbed_count: analysis.absorbed_count(),
            divergences: (0..analysis.divergences.len().min(limit))
                .map(entry)
                .collect(),
            divergences_truncated: analysis.divergences.len() > limit,
        }
    }
}

fn result_difference_report(
    runs: TracePair<'_>,
    analysis: &Analysis,
    r: &tritontui_engine::results::ResultDifference,
) -> ResultDifferenceReport {
    let hash = |h: Option<u64>| h.map(|h| format!("{h:016x}"));
    let (ta, tb) = match (runs.a.results.as_deref(), runs.b.results.as_deref()) {
        (Some(ra), Some(rb)) => (ra.get(r.a), rb.get(r.b)),
        _ => (None, None),
    };
    ResultDifferenceReport {
        a_result: r.a,
        b_result: r.b,
        tensor: ta.map(|t| result_name(runs.a, t)).unwrap_or_default(),
        name: ta.and_then(|t| t.name.as_deref()).map(str::to_owned),
        a_hash: hash(ta.and_then(|t| t.hash)),
        b_hash: hash(tb.and_then(|t| t.hash)),
        last_writer: result_writer(runs, r).map(|(a_index, b_index, kernel)| LaunchRef {
            a_index,
            b_index,
            kernel,
        }),
        explained_by: r
            .explained_by
            .map(|up| launch_ref(runs, &analysis.divergences[up])),
        detail: result_words(runs, analysis, r),
    }
}

/// A differing result no recorded divergence explains, as a root cause
/// (kind `result`): its kernel is the recorded launch that last wrote it,
/// or `(unrecorded)` when none did.
fn result_root_cause(report: &ResultDifferenceReport) -> DivergenceReport {
    let writer = report.last_writer.clone().unwrap_or(LaunchRef {
        a_index: None,
        b_index: None,
        kernel: UNRECORDED.to_owned(),
    });
    let mut root = reported_root(Kind::Result, writer, vec![report.tensor.clone()]);
    root.detail = report.detail.clone();
    root.impact_detail = "is part of the results".to_owned();
    root
}

/// A root cause the analysis's divergences do not hold (a result, a point
/// past its bound, a batch-variant launch), written by `writer`, on
/// `args`; its words to be filled in.
fn reported_root(kind: Kind, writer: LaunchRef, args: Vec<String>) -> DivergenceReport {
    DivergenceReport {
        kind,
        root_cause: true,
        absorbed: false,
        impact: Reach::ReachesResults,
        absorbed_by: Vec::new(),
        a_index: writer.a_index,
        b_index: writer.b_index,
        kernel: writer.kernel.clone(),
        args,
        rows: Vec::new(),
        producer: None,
        origin: None,
        overwritten: None,
        in_replay: Sides { a: None, b: None },
        compile_settings: None,
        only_in_a: 0,
        only_in_b: 0,
        step: None,
        reached_from: None,
        root: writer,
        detail: String::new(),
        impact_detail: String::new(),
        values: None,
        values_error: None,
    }
}

fn fingerprint_report(
    runs: TracePair<'_>,
    fingerprints: &tritontui_engine::fingerprints::FingerprintComparison,
) -> FingerprintReport {
    use tritontui_engine::fingerprints::Parted;
    let first_difference = fingerprints.first_difference.as_ref().map(|first| {
        let (trace, launch) = crate::words::fingerprints::side(runs, first);
        let kernel = trace.kernel_of(&trace.launches[launch]);
        let (parted, tensors) = match &first.what {
            Parted::Calls => ("calls", Vec::new()),
            Parted::Values { args } => {
                ("values", args.iter().map(|&i| kernel.arg_name(i)).collect())
            }
            Parted::Ended => ("ended", Vec::new()),
        };
        FingerprintDifferenceReport {
            step: first.step,
            in_step: first.in_step,
            launches: Sides {
                a: first.launches.a.map(|i| runs.a.launches[i].seq),
                b: first.launches.b.map(|i| runs.b.launches[i].seq),
            },
            what: crate::words::fingerprints::what(trace, launch),
            parted,
            tensors,
        }
    });
    FingerprintReport {
        counts: fingerprints.counts,
        steps: fingerprints.steps,
        first_difference,
        detail: crate::words::fingerprints::lines(runs, fingerprints),
    }
}

fn accuracy_report(runs: TracePair<'_>, accuracy: &Accuracy, limit: usize) -> AccuracyReport {
    AccuracyReport {
        points: Sides {
            a: accuracy.points.0,
            b: accuracy.points.1,
        },
        rule: crate::words::accuracy::rule(),
        detail: crate::words::accuracy::summary_lines(runs, accuracy),
        first_past_bound: accuracy.first_past().map(|p| point_report(runs, p)),
        results_within_reference: accuracy.results_within_reference,
        unsampled_results: accuracy.unsampled_results.clone(),
        reference_points: accuracy.reference_points,
        random_parting: accuracy.random_parting.map(|parting| Sides {
            a: parting.a.map(|i| runs.seq_a(i)),
            b: parting.b.map(|i| runs.seq_b(i)),
        }),
        aligned: accuracy
            .aligned
            .iter()
            .take(limit)
            .map(|p| point_report(runs, p))
            .collect(),
        aligned_truncated: accuracy.aligned.len() > limit,
    }
}

fn point_report(runs: TracePair<'_>, p: &AlignedPoint) -> PointReport {
    let side = |trace: &Trace, (launch, arg): (u32, ArgIndex)| {
        let l = &trace.launches[launch as usize];
        let kernel = trace.kernel_of(l);
        let arg = kernel.arg_name(usize::from(arg));
        let modules: Vec<String> = trace
            .modules_of(launch as usize, &arg)
            .into_iter()
            .map(str::to_owned)
            .collect();
        (l.seq, kernel.name.clone(), arg, modules)
    };
    let (a_index, a_kernel, a_arg, a_modules) = side(runs.a, p.a);
    let (b_index, b_kernel, b_arg, b_modules) = side(runs.b, p.b);
    let (a_only_ops, b_only_ops) = ops_only(runs, p.a.0 as usize, p.b.0 as usize);
    PointReport {
        a_index,
        a_kernel,
        a_arg,
        a_module: a_modules.last().cloned(),
        a_modules,
        b_index,
        b_kernel,
        b_arg,
        b_module: b_modules.last().cloned(),
        b_modules,
        a_only_ops,
        b_only_ops,
        result: p.result.clone(),
        dtype: p.dtype.clone(),
        numel: p.numel,
        relative_error: p.error.relative,
        rms_error: p.error.rms,
        max_abs_error: p.error.max_abs,
        ulps: p.error.ulps,
        upstream_error: p.upstream,
        upstream_rms_error: p.upstream_abs,
        bound: p.bound,
        rms_bound: p.bound_abs,
        past_bound: p.past_bound(),
        accountable: p.accountable(),
        drawn_apart: p.drawn_apart,
        reference: p.reference,
    }
}

/// The first point past its bound as a root cause (kind `accuracy`): its
/// kernel is B's launch that wrote it.
fn accuracy_root_cause(runs: TracePair<'_>, p: &AlignedPoint) -> DivergenceReport {
    let point = point_report(runs, p);
    let writer = LaunchRef {
        a_index: Some(point.a_index),
        b_index: Some(point.b_index),
        kernel: point.b_kernel.clone(),
    };
    let mut root = reported_root(Kind::Accuracy, writer, vec![point.b_arg.clone()]);
    root.step = crate::words::step_of(runs, Some(p.a.0), Some(p.b.0));
    root.detail = crate::words::accuracy::past_bound_words(runs, p);
    root.impact_detail = "its error is carried on to the results".to_owned();
    root
}

/// The batch-variant launch of `batch` as a root cause, if there is one:
/// absorbed where the request's rows of every result agree (and the
/// comparison's `verdict` says nothing else differs).
fn batch_root_cause(
    runs: TracePair<'_>,
    batch: &BatchComparison,
    verdict: Verdict,
) -> Option<DivergenceReport> {
    let variant = batch.root_cause.as_ref()?;
    let kernel = runs.a.kernel_of(&runs.a.launches[variant.a as usize]);
    let writer = LaunchRef {
        a_index: Some(runs.seq_a(variant.a)),
        b_index: Some(runs.seq_b(variant.b)),
        kernel: kernel.name.clone(),
    };
    let args = variant
        .args
        .iter()
        .map(|d| kernel.arg_name(usize::from(d.arg)))
        .collect();
    let mut root = reported_root(Kind::BatchVariant, writer, args);
    root.step = crate::words::step_of(runs, Some(variant.a), Some(variant.b));
    // The request's rows (request-relative indices).
    root.rows = super::batch::differing_rows(runs, variant);
    root.detail = crate::words::batch::variant_words(runs, variant);
    let absorbed = batch.results.agree() == Some(true) && verdict != Verdict::Divergent;
    if absorbed {
        root.impact = Reach::Absorbed;
    }
    let carried = match batch.results.agree() {
        Some(true) if absorbed => format!(
            "absorbed before the results: the request's rows of every result agree ({} compared)",
            batch.results.compared
        ),
        Some(false) => "the request's rows of the results carry it".to_owned(),
        _ => "the request's later rows carry it".to_owned(),
    };
    root.impact_detail = match (variant.stretch.0.len(), variant.stretch.1.len()) {
        (0, _) => carried,
        (a, b) => format!("with the kernels around it: {a} in A where B ran {b}; {carried}"),
    };
    Some(root)
}

/// The kernel a result root cause names when no recorded launch wrote
/// what the result holds.
pub const UNRECORDED: &str = "(unrecorded)";

fn run_info(trace: &Trace) -> RunInfo {
    RunInfo {
        path: trace.path.display().to_string(),
        torch: trace.header.torch.clone(),
        triton: trace.header.triton.clone(),
        devices: trace.header.devices.clone(),
        complete: trace.early_end.is_none(),
        ended_early: trace.early_end.map(|e| e.to_string()),
        raised: trace.raised().map(str::to_owned),
    }
}

fn launch_ref(runs: TracePair<'_>, d: &Divergence) -> LaunchRef {
    LaunchRef {
        a_index: d.a.map(|x| runs.seq_a(x)),
        b_index: d.b.map(|y| runs.seq_b(y)),
        kernel: runs.kernel(d).name.clone(),
    }
}

fn divergence_report(runs: TracePair<'_>, analysis: &Analysis, index: usize) -> DivergenceReport {
    let d = &analysis.divergences[index];
    let first_origin = d.primary_origin();
    let producer = first_origin.and_then(|o| {
        let launch_of = |trace: &Trace, origin: Origin| match origin {
            Origin::Launch(l, arg) => {
                let launch = &trace.launches[l as usize];
                let kernel = trace.kernel_of(launch);
                Some((
                    launch.seq,
                    kernel.name.clone(),
                    kernel.arg_name(usize::from(arg)),
                ))
            }
            _ => None,
        };
        let in_a = launch_of(runs.a, o.a);
        let in_b = launch_of(runs.b, o.b);
        let (kernel, arg) = in_a
            .as_ref()
            .or(in_b.as_ref())
            .map(|(_, k, a)| (k.clone(), a.clone()))?;
        Some(Producer {
            a_index: in_a.map(|(seq, ..)| seq),
            b_index: in_b.map(|(seq, ..)| seq),
            kernel,
            arg,
        })
    });
    let root = d.root;
    let captured = match (d.a, d.b) {
        (Some(x), Some(y)) => {
            crate::values::compare_captured(runs.a, runs.b, runs.seq_a(x), runs.seq_b(y))
        }
        _ => None,
    };
    let (values, values_error) = match captured {
        Some(Ok(values)) => (Some(values), None),
        Some(Err(e)) => (None, Some(format!("{e:#}"))),
        None => (None, None),
    };
    DivergenceReport {
        kind: d.kind,
        root_cause: analysis.is_root_cause(d),
        absorbed: d.absorbed,
        impact: match d.impact {
            Impact::Reaches => Reach::ReachesResults,
            Impact::Absorbed(_) => Reach::Absorbed,
            Impact::Unseen => Reach::Unseen,
            Impact::Uncompared => Reach::Uncompared,
        },
        absorbed_by: match &d.impact {
            Impact::Absorbed(by) => by
                .iter()
                .filter(|&&i| i != index)
                .map(|&i| launch_ref(runs, &analysis.divergences[i]))
                .collect(),
            Impact::Reaches | Impact::Unseen | Impact::Uncompared => Vec::new(),
        },
        a_index: d.a.map(|x| runs.seq_a(x)),
        b_index: d.b.map(|y| runs.seq_b(y)),
        kernel: runs.kernel(d).name.clone(),
        args: d.args.iter().map(|&a| runs.arg_name(d, a)).collect(),
        rows: match (d.a, d.b) {
            (Some(x), Some(y)) => d
                .args
                .iter()
                .filter_map(|&arg| {
                    let (rows, differing) = tritontui_engine::rows::differing_after(
                        runs.a,
                        x,
                        runs.b,
                        y,
                        usize::from(arg),
                    )?;
                    Some(RowsReport {
                        arg: runs.arg_name(d, arg),
                        rows,
                        differing,
                    })
                })
                .collect(),
            _ => Vec::new(),
        },
        producer,
        origin: first_origin.map(|o| origin_words(runs, d, o, analysis)),
        overwritten: first_origin
            .and_then(|o| o.overwrite)
            .map(|o| overwrite_report(runs, o)),
        in_replay: Sides {
            a: d.a.and_then(|x| in_replay(runs.a, x)),
            b: d.b.and_then(|y| in_replay(runs.b, y)),
        },
        compile_settings: runs.compiles_differ(d),
        only_in_a: d.only.0,
        only_in_b: d.only.1,
        step: crate::words::step_of(runs, d.a, d.b),
        reached_from: d
            .reached_from
            .map(|(up, _)| launch_ref(runs, &analysis.divergences[up])),
        root: launch_ref(runs, &analysis.divergences[root]),
        detail: divergence_words(runs, analysis, d),
        impact_detail: impact_words(runs, analysis, index),
        values,
        values_error,
    }
}

fn overwrite_report(
    runs: TracePair<'_>,
    o: tritontui_engine::analysis::Overwrite,
) -> OverwriteReport {
    let (run, trace) = if o.in_a { ("a", runs.a) } else { ("b", runs.b) };
    OverwriteReport {
        run,
        by: trace.launches[o.by as usize].seq,
        by_replay: in_replay(trace, o.by),
        replaced: o.replaced.map(|r| trace.launches[r as usize].seq),
        replaced_replay: o.replaced.and_then(|r| in_replay(trace, r)),
        shared_pool: o.replaced.is_some_and(|r| {
            trace.share_a_pool(&trace.launches[o.by as usize], &trace.launches[r as usize])
        }),
    }
}

/// The replay launch `index` of `trace` ran in, if any.
fn in_replay(trace: &tritontui_trace::Trace, index: u32) -> Option<InReplay> {
    let launch = trace.launches.get(index as usize)?;
    trace.replay_of(launch).map(|r| InReplay {
        graph: r.graph,
        replay: r.n,
    })
}

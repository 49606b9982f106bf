//! Two different programs' numerics compared where both materialize the
//! same tensor (eager against compiled, two configs, fp32 against bf16):
//! the error at each aligned point, the bound its upstream error and dtype
//! allow, and the first point past its bound. Given only when both traces
//! hold samples (`samples`) and the programs differ; a program run twice
//! still owes equal bits.
//!
//! The bound (docs/diff-json.md): a point may carry `GROWTH` times the
//! largest error of what its launch in run B read (`upstream`), and at
//! least `floor(dtype)`, the error of losing 3/8 of the significand's bits
//! to reordering (2^-15 relative for float32, 2^-5 for bfloat16), the
//! dtype being the coarser of the two runs'. Errors are weighed both
//! relative and absolute: a point is past its bound only when both its
//! relative error passes the relative bound and its absolute error the
//! absolute one, so that neither a cancellation (which inflates the
//! relative error of a small result) nor a normalization (which inflates
//! the absolute error of a small input) is taken for a bug. Points written
//! once the programs draw other random numbers (`random`) are not judged.

pub mod error;
pub mod fused;
pub mod matching;
pub mod points;
pub mod random;
pub mod reference;
pub mod upstream;

use crate::producer::{Origin, ResultWriter};
use crate::results::ResultComparison;
use error::{PointError, precision_bits};
use points::Point;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use tritontui_trace::{ArgIndex, Trace};

/// How many times the largest error upstream a point may carry.
pub const GROWTH: f64 = 16.0;

/// The smallest bound of a point whose coarser dtype is `dtype`: losing
/// 3/8 of its significand bits, `2^(-5p/8)`.
pub fn floor(dtype: &str) -> f64 {
    2f64.powf(-5.0 * f64::from(precision_bits(dtype)) / 8.0)
}

/// One point of each run taken to be the same tensor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AlignedPoint {
    /// The launch of run A that wrote it, and the argument.
    pub a: (u32, ArgIndex),
    /// The launch of run B, and the argument.
    pub b: (u32, ArgIndex),
    /// The coarser of the two dtypes.
    pub dtype: String,
    /// Its element count.
    pub numel: u64,
    /// The result both runs hold it as, when it is one (by name, or the
    /// view both last wrote).
    pub result: Option<String>,
    /// The error between the runs, from the samples.
    pub error: PointError,
    /// The largest relative error of what its launch in run B read.
    pub upstream: f64,
    /// The largest absolute error of what its launch in run B read.
    pub upstream_abs: f64,
    /// Whether those errors are all known: none of what it read is a
    /// tensor only run B materializes, whose error is estimated from what
    /// its launch read.
    pub judged: bool,
    /// Whether everything its launch read holds the same bits in both runs,
    /// or is a buffer only run B materializes made from such (so its error
    /// arose in its launch, or in the launches of run B alone that made
    /// what it read).
    pub inputs_equal: bool,
    /// The relative error it may carry.
    pub bound: f64,
    /// Checked against a reference run (`--reference`): the accuracy
    /// minifier's rule, which then decides instead of the bound.
    pub reference: Option<reference::ReferenceCheck>,
    /// The absolute error it may carry: `GROWTH` times `upstream_abs`, at
    /// least the relative floor of its values' scale.
    pub bound_abs: f64,
    /// Whether it was written once the runs' random numbers parted
    /// (`Accuracy::random_parting`): then nothing bounds its error, and it
    /// is not judged.
    pub drawn_apart: bool,
}

impl AlignedPoint {
    /// Whether its error is past its bound: both the relative and the
    /// absolute one; against a reference run, the minifier's rule.
    pub fn past_bound(&self) -> bool {
        if self.drawn_apart {
            return false;
        }
        match &self.reference {
            Some(check) => check.fails(),
            None => self.error.relative > self.bound && self.error.rms > self.bound_abs,
        }
    }

    /// Whether, past its bound, it is a root cause: its launch read the
    /// same bits in both runs, or buffers only run B materializes that
    /// were made from such (then the error arose in it or in them), so
    /// the error is not carried in from an input whose difference 32
    /// samples cannot show (one that sits in a few unsampled elements,
    /// which a matmul then spreads over its output); or a reference run
    /// judges it. Otherwise a point past its bound is a suspect
    /// (`Accuracy::unsure`).
    pub fn accountable(&self) -> bool {
        self.reference.is_some() || self.inputs_equal
    }
}

/// The numerics of two programs compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Accuracy {
    /// Points (written floating tensors with samples) in A and in B.
    pub points: (usize, usize),
    /// The aligned points in run B's order, then the differing results.
    pub aligned: Vec<AlignedPoint>,
    /// The first aligned point past its bound (index into `aligned`).
    pub first_past: Option<usize>,
    /// Results that differ between the runs whose last write has no
    /// samples in one run: nothing says how far apart they are.
    pub unsampled_results: Vec<String>,
    /// Against a reference run, every differing result is within the
    /// accuracy minifier's rule: the program passes `same()`, so points
    /// past the rule before the results (an intermediate whose error the
    /// rest of the program absorbed, or one 32 samples overstate) are no
    /// root cause ([`Accuracy::absorbed`]).
    pub results_within_reference: bool,
    /// The runs' results were compared and agree bit for bit: whatever
    /// the points say, no error reached them, so points past their bound
    /// are absorbed, no root cause ([`Accuracy::absorbed`]).
    pub results_equal: bool,
    /// Every differing result was sampled and is within rounding of its
    /// counterpart (its relative error at most `floor` of its dtype): no
    /// error past rounding reached the results, so points past their
    /// bound before them (an intermediate the rest of the program
    /// absorbed, or two tensors taken for one: two micro-batches' losses
    /// against one batch's) are no root cause ([`Accuracy::absorbed`]).
    pub results_within_rounding: bool,
    /// The reference run's points (written floating tensors with
    /// samples), when there is one: fewer than run A's where it ran less
    /// of the program (it stopped early, or raised).
    pub reference_points: Option<usize>,
    /// The draws at which the runs' random numbers part, when they do.
    pub random_parting: Option<random::RandomParting>,
}

impl Accuracy {
    /// The comparison of runs `a` and `b`'s numerics, when both hold
    /// samples; `results` is the runs' results compared, with the data
    /// flow followed (their last writers).
    pub fn of(
        a: &Trace,
        b: &Trace,
        results: &ResultComparison,
        reference: Option<&Trace>,
    ) -> Option<Accuracy> {
        if !(a.has_samples() && b.has_samples()) {
            return None;
        }
        let results_equal = results.compared > 0 && results.differences.is_empty();
        let (points_a, points_b) = (points::points(a), points::points(b));
        let pairs = pairs_without_byproducts((a, &points_a), (b, &points_b));
        let error = |i: usize, j: usize| {
            let (dtype, _) = coarser(&points_a[i], &points_b[j]);
            PointError::between(points_a[i].samples, points_b[j].samples, dtype)
        };
        let errors: Vec<PointError> = pairs.iter().map(|&(i, j)| error(i, j)).collect();
        let by_write: FxHashMap<(u32, ArgIndex), (f64, f64, bool)> = pairs
            .iter()
            .zip(&errors)
            .map(|(&(i, j), e)| {
                let equal = points_a[i].bitwise_equal(&points_b[j]);
                let key = (points_b[j].launch, points_b[j].arg);
                (key, (e.relative, e.rms, equal))
            })
            .collect();
        let sampled = points_b.iter().map(|p| (p.launch, p.arg)).collect();
        let upstream = upstream::upstream_errors(b, &by_write, &sampled);
        let start = |j: usize| {
            upstream
                .get(&points_b[j].launch)
                .copied()
                .unwrap_or_default()
        };
        let mut aligned: Vec<AlignedPoint> = pairs
            .iter()
            .zip(errors)
            .map(|(&(i, j), e)| aligned_point(&points_a[i], &points_b[j], e, start(j), None))
            .collect();
        let (at_a, at_b) = (index(&points_a), index(&points_b));
        // The reference run's point of each point of A, when there is one.
        let points_r = reference.map(points::points).unwrap_or_default();
        let mut r_of_a = vec![None; points_a.len()];
        for (k, i) in matching::match_points(&points_r, &points_a) {
            r_of_a[i] = Some(k);
        }
        let check = |i: usize, j: usize| {
            let k = r_of_a[i]?;
            let (b, r) = (&points_b[j], &points_r[k]);
            let a = points_a[i].samples;
            Some(reference::ReferenceCheck::of(
                r.samples, a, b.samples, b.dtype, b.numel,
            ))
        };
        for (point, &(i, j)) in aligned.iter_mut().zip(&pairs) {
            point.reference = check(i, j);
        }
        let random_parting = random::RandomParting::of(a, b);
        let mut unsampled_results = Vec::new();
        let point =
            |at: &FxHashMap<(u32, ArgIndex), usize>, writer: Option<ResultWriter>| match writer
                .map(|w| w.origin)
            {
                Some(Origin::Launch(launch, arg)) => at.get(&(launch, arg)).copied(),
                _ => None,
            };
        for difference in &results.differences {
            let name = result_name(a, difference.a);
            let (Some(i), Some(j)) = (
                point(&at_a, difference.writer_a),
                point(&at_b, difference.writer_b),
            ) else {
                unsampled_results.push(name);
                continue;
            };
            let mut result = aligned_point(
                &points_a[i],
                &points_b[j],
                error(i, j),
                start(j),
                Some(name),
            );
            result.reference = check(i, j);
            aligned.push(result);
        }
        if let Some(parting) = random_parting {
            for point in &mut aligned {
                point.drawn_apart = parting.passed_by(point.a.0, point.b.0);
            }
        }
        // The minifier judges a program by its results, and only looks
        // inside one whose results fail its rule.
        let mut results = aligned.iter().filter(|p| p.result.is_some()).peekable();
        let results_within_reference = results.peek().is_some()
            && unsampled_results.is_empty()
            && results.all(|p| !p.drawn_apart && p.reference.is_some_and(|check| !check.fails()));
        let mut results = aligned.iter().filter(|p| p.result.is_some()).peekable();
        let results_within_rounding = results.peek().is_some()
            && unsampled_results.is_empty()
            && results.all(|p| !p.drawn_apart && p.error.relative <= floor(&p.dtype));
        let first_past = aligned
            .iter()
            .position(|p| p.accountable() && p.past_bound())
            .filter(|_| !results_within_reference && !results_equal && !results_within_rounding);
        Some(Accuracy {
            points: (points_a.len(), points_b.len()),
            aligned,
            first_past,
            unsampled_results,
            results_within_reference,
            results_equal,
            results_within_rounding,
            reference_points: reference.map(|_| points_r.len()),
            random_parting,
        })
    }

    /// Whether every aligned point and differing result is within its
    /// bound (none past an estimated one) and every differing result was
    /// sampled: the programs are equivalent as far as the arithmetic
    /// allows.
    pub fn within_bounds(&self) -> bool {
        self.first_past.is_none()
            && self.unsampled_results.is_empty()
            && self.unsure().count() == 0
            && self.apart_by_draws().next().is_none()
    }

    /// Aligned points written once the runs' random numbers parted whose
    /// values differ: not judged, and they forbid `equivalent`.
    pub fn apart_by_draws(&self) -> impl Iterator<Item = &AlignedPoint> {
        self.aligned
            .iter()
            .filter(|p| p.drawn_apart && p.error.max_abs != 0.0)
    }

    /// Aligned points past their bound that are not root causes
    /// (`AlignedPoint::accountable` false): suspects, which forbid
    /// `equivalent`; none where the results say no error reached them
    /// ([`Accuracy::results_settle`]).
    pub fn unsure(&self) -> impl Iterator<Item = &AlignedPoint> {
        self.aligned
            .iter()
            .filter(|p| !self.results_settle() && !p.accountable() && p.past_bound())
    }

    /// Aligned points past their bound where the results say no error
    /// reached them ([`Accuracy::results_settle`]): absorbed, not root
    /// causes.
    pub fn absorbed(&self) -> impl Iterator<Item = &AlignedPoint> {
        self.aligned
            .iter()
            .filter(|p| self.results_settle() && p.past_bound())
    }

    /// Whether the results settle the comparison, as the accuracy
    /// minifier judges a program by its results: they agree bit for bit,
    /// or every differing one is within the minifier's rule against a
    /// reference run.
    pub fn results_settle(&self) -> bool {
        self.results_equal || self.results_within_reference || self.results_within_rounding
    }

    /// The first aligned point past its bound.
    pub fn first_past(&self) -> Option<&AlignedPoint> {
        self.first_past.map(|i| &self.aligned[i])
    }
}

/// The pairs of points of runs A and B (indices into their points) that
/// [`matching::match_points`] aligns among the points that are no
/// launch's byproduct ([`without_byproducts`]): a tensor no launch reads and no
/// result holds carries no error anywhere, and one run's such tensor may
/// be another quantity than the other's of the same shape (eager layer
/// norm's reciprocal deviations, Inductor's sums of squared deviations,
/// under `no_grad`).
fn pairs_without_byproducts<'t>(
    (a, points_a): (&Trace, &[Point<'t>]),
    (b, points_b): (&Trace, &[Point<'t>]),
) -> Vec<(usize, usize)> {
    let (kept_a, kept_b) = (
        without_byproducts(a, points_a),
        without_byproducts(b, points_b),
    );
    let chosen = |kept: &[usize], points: &[Point<'t>]| -> Vec<Point<'t>> {
        kept.iter().map(|&i| points[i]).collect()
    };
    matching::match_points(&chosen(&kept_a, points_a), &chosen(&kept_b, points_b))
        .into_iter()
        .map(|(i, j)| (kept_a[i], kept_b[j]))
        .collect()
}

/// The indices of `trace`'s points but its launches' byproducts: a write
/// nothing reads where another write of its launch reaches something (a
/// layer norm's statistics beside its output). A launch none of whose
/// writes reaches anything (the last layer of a forward whose output the
/// program drops) keeps its points.
fn without_byproducts(trace: &Trace, points: &[Point<'_>]) -> Vec<usize> {
    let writes = upstream::reaching_writes(trace);
    let reaches = |i: usize| writes.contains(&(points[i].launch, points[i].arg));
    let launches_reaching: FxHashSet<u32> = (0..points.len())
        .filter(|&i| reaches(i))
        .map(|i| points[i].launch)
        .collect();
    (0..points.len())
        .filter(|&i| reaches(i) || !launches_reaching.contains(&points[i].launch))
        .collect()
}

/// The coarser of two points' dtypes, and its precision.
fn coarser<'t>(a: &Point<'t>, b: &Point<'t>) -> (&'t str, u32) {
    let (pa, pb) = (precision_bits(a.dtype), precision_bits(b.dtype));
    if pa < pb {
        (a.dtype, pa)
    } else {
        (b.dtype, pb)
    }
}

fn aligned_point(
    a: &Point<'_>,
    b: &Point<'_>,
    error: PointError,
    upstream: upstream::Upstream,
    result: Option<String>,
) -> AlignedPoint {
    let upstream::Upstream {
        relative: upstream,
        absolute: upstream_abs,
        known,
        equal,
    } = upstream;
    let (dtype, _) = coarser(a, b);
    // The scale of its values (root mean square of B's samples).
    let scale = (b
        .samples
        .iter()
        .filter(|x| x.is_finite())
        .map(|x| x * x)
        .sum::<f64>()
        / b.samples.len().max(1) as f64)
        .sqrt();
    AlignedPoint {
        a: (a.launch, a.arg),
        b: (b.launch, b.arg),
        dtype: dtype.to_owned(),
        numel: b.numel,
        result,
        error,
        upstream,
        upstream_abs,
        judged: known,
        inputs_equal: equal,
        bound: (GROWTH * upstream).max(floor(dtype)),
        reference: None,
        bound_abs: (GROWTH * upstream_abs).max(floor(dtype) * scale),
        drawn_apart: false,
    }
}

/// Each point's index by its launch and argument.
fn index(points: &[Point<'_>]) -> FxHashMap<(u32, ArgIndex), usize> {
    points
        .iter()
        .enumerate()
        .map(|(i, p)| ((p.launch, p.arg), i))
        .collect()
}

/// What run A calls result `i`, or its place among the results.
fn result_name(trace: &Trace, i: usize) -> String {
    let named = trace
        .results
        .as_ref()
        .and_then(|results| results.get(i))
        .and_then(|r| r.name.as_deref());
    named.map_or_else(|| format!("result {i}"), str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_loses_three_eighths_of_the_bits() {
        assert_eq!(floor("float32"), 2f64.powi(-15));
        assert_eq!(floor("bfloat16"), 2f64.powi(-5));
    }
}

//! Two different programs' numerics compared where both materialize the
//! same tensor (eager against compiled, two configs, fp32 against bf16):
//! the error at each aligned point, the bound its upstream error and dtype
//! allow, and the first point past its bound. Given only when both traces
//! hold samples (`samples`) and the programs differ; a program run twice
//! still owes equal bits.
//!
//! The bound (docs/numerics.md): a point may carry `GROWTH` times the
//! largest error of any aligned point before it in run B, and at least
//! `floor(dtype)`, the error of losing 3/8 of the significand's bits to
//! reordering (2^-15 relative for float32, 2^-5 for bfloat16), the dtype
//! being the coarser of the two runs'.

pub mod error;
pub mod matching;
pub mod points;

use crate::producer::Origin;
use crate::results::ResultComparison;
use error::{PointError, precision_bits};
use points::Point;
use rustc_hash::FxHashMap;
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
    /// The largest relative error of an aligned point before it in run B.
    pub upstream: f64,
    /// The relative error it may carry.
    pub bound: f64,
}

impl AlignedPoint {
    /// Whether its error is past its bound.
    pub fn past_bound(&self) -> bool {
        self.error.relative > self.bound
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
}

impl Accuracy {
    /// The comparison of runs `a` and `b`'s numerics, when both hold
    /// samples; `results` is the runs' results compared, with the data
    /// flow followed (their last writers).
    pub fn of(a: &Trace, b: &Trace, results: &ResultComparison) -> Option<Accuracy> {
        if !(a.has_samples() && b.has_samples()) {
            return None;
        }
        let (points_a, points_b) = (points::points(a), points::points(b));
        let pairs = matching::match_points(&points_a, &points_b);
        let mut aligned = Vec::with_capacity(pairs.len());
        let mut upstream = 0.0f64;
        for &(i, j) in &pairs {
            let point = aligned_point(&points_a[i], &points_b[j], upstream, None);
            upstream = upstream.max(point.error.relative);
            aligned.push(point);
        }
        let (at_a, at_b) = (index(&points_a), index(&points_b));
        let mut unsampled_results = Vec::new();
        for difference in &results.differences {
            let name = result_name(a, difference.a);
            let point = |at: &FxHashMap<(u32, ArgIndex), usize>,
                         writer: &Option<crate::producer::ResultWriter>| {
                match writer.map(|w| w.origin) {
                    Some(Origin::Launch(launch, arg)) => at.get(&(launch, arg)).copied(),
                    _ => None,
                }
            };
            match (
                point(&at_a, &difference.writer_a),
                point(&at_b, &difference.writer_b),
            ) {
                (Some(i), Some(j)) => {
                    aligned.push(aligned_point(
                        &points_a[i],
                        &points_b[j],
                        upstream,
                        Some(name),
                    ));
                }
                _ => unsampled_results.push(name),
            }
        }
        let first_past = aligned.iter().position(AlignedPoint::past_bound);
        Some(Accuracy {
            points: (points_a.len(), points_b.len()),
            aligned,
            first_past,
            unsampled_results,
        })
    }

    /// Whether every aligned point and differing result is within its
    /// bound and every differing result was sampled: the programs are
    /// equivalent as far as the arithmetic allows.
    pub fn within_bounds(&self) -> bool {
        self.first_past.is_none() && self.unsampled_results.is_empty()
    }

    /// The first aligned point past its bound.
    pub fn first_past(&self) -> Option<&AlignedPoint> {
        self.first_past.map(|i| &self.aligned[i])
    }
}

fn aligned_point(
    a: &Point<'_>,
    b: &Point<'_>,
    upstream: f64,
    result: Option<String>,
) -> AlignedPoint {
    let dtype = if precision_bits(a.dtype) < precision_bits(b.dtype) {
        a.dtype
    } else {
        b.dtype
    };
    AlignedPoint {
        a: (a.launch, a.arg),
        b: (b.launch, b.arg),
        dtype: dtype.to_owned(),
        numel: b.numel,
        result,
        error: PointError::between(a.samples, b.samples, dtype),
        upstream,
        bound: (GROWTH * upstream).max(floor(dtype)),
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

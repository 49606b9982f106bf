//! Which point of one program is which point of the other. Two programs
//! computing the same model differently (eager ops against fused kernels,
//! two configs, fp32 against bf16) materialize different tensors, in
//! different numbers and orders; a tensor both materialize has the same
//! element count and, sample for sample, nearly the same values. Points
//! are paired when they are that close, and the pairs kept are the most
//! that keep both runs' execution order (a longest common subsequence
//! over the candidate pairs, Hunt and Szymanski's way).

use super::error::PointError;
use super::points::Point;
use rustc_hash::FxHashMap;

/// Two points are candidates when their samples' relative error is at
/// most this (and neither is an aten op other than the other's): far above
/// any rounding (and a coarse planted bug), far below the distance between
/// two different tensors of the model.
pub const CANDIDATE_LIMIT: f64 = 0.5;

/// How far from its proportional place in the other run a point's
/// candidates are looked for (in points of that run).
pub const WINDOW: usize = 4096;

/// A candidate pair may be this many times farther apart than either
/// point's nearest candidate (ties: copies of one tensor).
pub const NEAREST_SLACK: f64 = 2.0;

/// The pairs `(index in a, index in b)` kept, in execution order.
///
/// A pair is a candidate when its points are close (`CANDIDATE_LIMIT`)
/// and each is, within `NEAREST_SLACK`, the other's nearest: a residual
/// stream `x + h` is close to `x`, but `x`'s own counterpart is closer.
/// The pairs kept are the most that keep both runs' order: values alone
/// cannot tell one training step's tensor from the next one's, which
/// may be nearer than two programs' rounding.
pub fn match_points(a: &[Point<'_>], b: &[Point<'_>]) -> Vec<(usize, usize)> {
    let candidates = candidates(a, b);
    let mut nearest_a = vec![f64::INFINITY; a.len()];
    let mut nearest_b = vec![f64::INFINITY; b.len()];
    for &(i, j, error) in &candidates {
        nearest_a[i] = nearest_a[i].min(error);
        nearest_b[j] = nearest_b[j].min(error);
    }
    let near = |error: f64, nearest: f64| error <= NEAREST_SLACK * nearest + f64::MIN_POSITIVE;
    let kept: Vec<(usize, usize, f64)> = candidates
        .into_iter()
        .filter(|&(i, j, error)| near(error, nearest_a[i]) && near(error, nearest_b[j]))
        .collect();
    let chain = longest_chain(kept.iter().copied());
    with_local_reorders(chain, &kept, a.len(), b.len())
}

/// How far (in points of run B) a pair may fall outside the span of the
/// chain's pairs around it and still be taken as the same work reordered.
pub const REORDER_SLACK: usize = 64;

/// The chain, and the pairs it left out that are the only candidate of
/// both their points and fall where the chain's pairs around them say
/// they should, give or take `REORDER_SLACK`: a program that orders its
/// work otherwise (Inductor's backward computes a weight's gradient
/// before or after another's) still has its points paired, while a
/// tensor of the next training step, nearer than two programs' rounding,
/// falls a step away and is not.
fn with_local_reorders(
    chain: Vec<(usize, usize)>,
    kept: &[(usize, usize, f64)],
    a_len: usize,
    b_len: usize,
) -> Vec<(usize, usize)> {
    let (mut count_a, mut count_b) = (vec![0u32; a_len], vec![0u32; b_len]);
    for &(i, j, _) in kept {
        count_a[i] += 1;
        count_b[j] += 1;
    }
    let (mut used_a, mut used_b) = (vec![false; a_len], vec![false; b_len]);
    for &(i, j) in &chain {
        used_a[i] = true;
        used_b[j] = true;
    }
    let mut pairs = chain.clone();
    for &(i, j, _) in kept {
        if count_a[i] != 1 || count_b[j] != 1 || used_a[i] || used_b[j] {
            continue;
        }
        // The chain's pairs just before and after `i` in run A.
        let after = chain.partition_point(|&(ci, _)| ci < i);
        let low = after.checked_sub(1).map_or(0, |k| chain[k].1);
        let high = chain.get(after).map_or(b_len, |&(_, cj)| cj);
        if j + REORDER_SLACK >= low && j <= high + REORDER_SLACK {
            pairs.push((i, j));
            used_a[i] = true;
            used_b[j] = true;
        }
    }
    pairs.sort_by_key(|&(_, j)| j);
    pairs
}

/// Every close pair `(i, j, relative error)`, by `i`, then `j` descending.
fn candidates(a: &[Point<'_>], b: &[Point<'_>]) -> Vec<(usize, usize, f64)> {
    let mut by_numel: FxHashMap<(u64, usize), Vec<usize>> = FxHashMap::default();
    for (j, p) in b.iter().enumerate() {
        by_numel
            .entry((p.numel, p.samples.len()))
            .or_default()
            .push(j);
    }
    let mut out = Vec::new();
    for (i, p) in a.iter().enumerate() {
        let Some(group) = by_numel.get(&(p.numel, p.samples.len())) else {
            continue;
        };
        let centre = if a.len() > 1 {
            i * b.len().saturating_sub(1) / (a.len() - 1)
        } else {
            0
        };
        let (low, high) = (centre.saturating_sub(WINDOW), centre + WINDOW);
        let start = group.partition_point(|&j| j < low);
        let end = group.partition_point(|&j| j <= high);
        for &j in group[start..end].iter().rev() {
            if !p.same_op(&b[j]) {
                continue;
            }
            if let Some(error) = closeness(p.samples, b[j].samples) {
                out.push((i, j, error));
            }
        }
    }
    out
}

/// The most pairs that keep both runs' order: a longest chain of pairs
/// increasing in both indices, one pair per `i` (pairs come by `i`, then
/// `j` descending).
fn longest_chain(pairs: impl Iterator<Item = (usize, usize, f64)>) -> Vec<(usize, usize)> {
    const NONE: usize = usize::MAX;
    let mut tails: Vec<usize> = Vec::new(); // the j ending each length's best chain
    let mut tail_links: Vec<usize> = Vec::new(); // and its link
    let mut links: Vec<(usize, usize, usize)> = Vec::new(); // (i, j, previous link)
    for (i, j, _) in pairs {
        let k = tails.partition_point(|&t| t < j);
        let previous = if k == 0 { NONE } else { tail_links[k - 1] };
        links.push((i, j, previous));
        if k == tails.len() {
            tails.push(j);
            tail_links.push(links.len() - 1);
        } else if j < tails[k] {
            tails[k] = j;
            tail_links[k] = links.len() - 1;
        }
    }
    let mut chain = Vec::with_capacity(tails.len());
    let mut at = tail_links.last().copied().unwrap_or(NONE);
    while at != NONE {
        let (i, j, previous) = links[at];
        chain.push((i, j));
        at = previous;
    }
    chain.reverse();
    chain
}

/// The relative error of two points' samples when they are close enough
/// to be one tensor: a sample far from its counterpart rules them out
/// before the rest are read.
fn closeness(a: &[f64], b: &[f64]) -> Option<f64> {
    let far = |x: f64, y: f64| {
        let d = (x - y).abs();
        d > CANDIDATE_LIMIT * x.abs().max(y.abs()) && d > f64::MIN_POSITIVE
    };
    if a.iter()
        .zip(b)
        .take(4)
        .any(|(&x, &y)| x.is_finite() && y.is_finite() && far(x, y))
    {
        return None;
    }
    let error = PointError::between(a, b, "float64").relative;
    (error <= CANDIDATE_LIMIT).then_some(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(samples: &'static [f64]) -> Point<'static> {
        Point {
            launch: 0,
            arg: 0,
            numel: samples.len() as u64,
            dtype: "float32",
            shape: &[],
            hash: None,
            samples,
            op: None,
            reads: 0,
        }
    }

    #[test]
    fn close_tensors_pair_in_order_and_strangers_do_not() {
        let a = [
            point(&[1.0, 2.0, 3.0]),
            point(&[5.0, -1.0, 0.5]), // an eager intermediate B fused away
            point(&[0.1, 0.2, 0.3]),
            point(&[9.0, 9.0, 9.0]),
        ];
        let b = [
            point(&[1.0, 2.0, 3.000_001]),
            point(&[0.1, 0.2, 0.300_01]),
            point(&[-7.0, 4.0, 2.0]), // only B's
            point(&[9.0, 9.0, 9.001]),
        ];
        assert_eq!(match_points(&a, &b), vec![(0, 0), (2, 1), (3, 3)]);
    }

    #[test]
    fn a_residual_sum_close_to_its_input_pairs_with_its_own_counterpart() {
        // x, then x + h with h small: close to x, closer to its own copy.
        let a = [point(&[1.0, 2.0, 3.0]), point(&[1.1, 2.1, 3.1])];
        let b = [point(&[1.1, 2.1, 3.100_001])];
        assert_eq!(match_points(&a, &b), vec![(1, 0)]);
    }

    #[test]
    fn work_done_in_another_order_nearby_still_pairs() {
        let a = [point(&[1.0, 1.0]), point(&[2.0, 2.0])];
        let b = [point(&[2.0, 2.0]), point(&[1.0, 1.0])];
        assert_eq!(match_points(&a, &b), vec![(1, 0), (0, 1)]);
    }

    #[test]
    fn a_pair_far_from_where_the_chain_puts_it_is_left_out() {
        // A's first point is nearest to B's last, REORDER_SLACK and more
        // points after the chain's pairs around it.
        let mut a = vec![point(&[9.0, 9.5])];
        let mut b = Vec::new();
        for k in 0..100 {
            let value: &'static [f64] = Box::leak(Box::new([k as f64 + 100.0, 1.0]));
            a.push(point(value));
            b.push(point(value));
        }
        b.push(point(&[9.0, 9.5]));
        let pairs = match_points(&a, &b);
        assert_eq!(pairs.len(), 100);
        assert!(!pairs.contains(&(0, 100)), "{pairs:?}");
    }

    #[test]
    fn copies_of_one_tensor_pair_in_order() {
        // Two copies in each run, equally near: order decides.
        let a = [point(&[1.0, 1.0]), point(&[1.0, 1.0])];
        let b = [point(&[1.0, 1.0]), point(&[1.0, 1.0])];
        assert_eq!(match_points(&a, &b), vec![(0, 0), (1, 1)]);
    }

    #[test]
    fn tensors_of_other_sizes_never_pair() {
        let a = [point(&[1.0, 2.0])];
        let b = [point(&[1.0, 2.0, 3.0])];
        assert!(match_points(&a, &b).is_empty());
    }

    #[test]
    fn two_different_aten_ops_never_pair_however_close() {
        // A compiled run's bias-less `mm` (its bias moved into the next
        // kernel) against an eager `addmm`; the same op `.out` pairs.
        let a = [Point {
            op: Some("addmm"),
            ..point(&[1.0, 2.0])
        }];
        let mm = [Point {
            op: Some("mm"),
            ..point(&[1.1, 2.1])
        }];
        assert!(match_points(&a, &mm).is_empty());
        let addmm = [Point {
            op: Some("addmm"),
            ..point(&[1.0, 2.000_001])
        }];
        assert_eq!(match_points(&a, &addmm), vec![(0, 0)]);
        // The same op on inputs of other shapes (a mean over other rows).
        let elsewhere = [Point {
            reads: 1,
            ..addmm[0]
        }];
        assert!(match_points(&a, &elsewhere).is_empty());
        // A generated kernel may hold what any op computed.
        assert_eq!(match_points(&a, &[point(&[1.0, 2.0])]), vec![(0, 0)]);
    }
}

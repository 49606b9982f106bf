//! A run's points: every floating tensor a launch wrote whose samples the
//! recorder kept (`samples`), in execution order. They are where two
//! programs computing the same model can be compared value against value.

use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};
use tritontui_trace::{ArgIndex, ArgRef, Launch, Trace};

/// One written tensor with samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point<'t> {
    /// The launch that wrote it (index into `Trace::launches`).
    pub launch: u32,
    /// The argument it was written through.
    pub arg: ArgIndex,
    /// Its element count: the samples' positions depend on it alone.
    pub numel: u64,
    /// Its dtype.
    pub dtype: &'t str,
    /// Its shape.
    pub shape: &'t [u64],
    /// Its exact hash after the launch, if hashed.
    pub hash: Option<u64>,
    /// Its samples after the launch.
    pub samples: &'t [f64],
    /// The aten op that wrote it (`addmm` for `aten::addmm.out`), when its
    /// launch is one (an eager op, or an extern kernel of compiled code).
    pub op: Option<&'t str>,
    /// The shapes of the tensors that op read, in order, hashed (0 for a
    /// launch of no aten op).
    pub reads: u64,
}

impl Point<'_> {
    /// Whether `other` may hold the same tensor as far as what wrote them
    /// says: two aten ops compute the same value only when they are the
    /// same op (in place, out-of-place or `.out`), so a compiled run's
    /// `mm` (its bias moved into the next kernel) is not an eager `addmm`,
    /// on inputs of the same shapes, which the op's arithmetic fixes: a
    /// mean over 64 rows is not one over 32 (a micro-batch's loss).
    pub fn same_op(&self, other: &Point<'_>) -> bool {
        match (self.op, other.op) {
            (Some(x), Some(y)) => x == y && self.reads == other.reads,
            _ => true,
        }
    }

    /// Whether `other` holds the same bits: the same dtype and shape, and
    /// the same exact hash.
    pub fn bitwise_equal(&self, other: &Point<'_>) -> bool {
        self.hash.is_some()
            && self.hash == other.hash
            && self.dtype == other.dtype
            && self.shape == other.shape
    }
}

/// The points of `trace`, in execution order (autotuning left out). The
/// points one launch writes have no order of their own (Inductor's
/// LayerNorm kernel writes its reciprocal deviation, its mean and its
/// output where eager's op returns the output, the mean and the
/// deviation): they come by size, then by the mean of their samples,
/// which two programs computing the same tensors agree on.
pub fn points(trace: &Trace) -> Vec<Point<'_>> {
    let mut out = Vec::new();
    for (launch, l) in trace.program_launches() {
        let first = out.len();
        let kernel = trace.kernel_of(l);
        let op = (kernel.backend == "aten").then(|| op_of(&kernel.name));
        let reads = if op.is_some() {
            read_shapes(trace, l)
        } else {
            0
        };
        for (arg, value) in trace.args_of(l).enumerate() {
            let ArgRef::Tensor(t) = value else { continue };
            let Some(samples) = t.samples else { continue };
            if !t.written || t.allocated || samples.is_empty() {
                continue;
            }
            out.push(Point {
                launch: launch as u32,
                arg: arg as ArgIndex,
                numel: t.layout.shape.iter().product(),
                dtype: &t.layout.dtype,
                shape: &t.layout.shape,
                hash: t.post,
                samples,
                op,
                reads,
            });
        }
        out[first..].sort_by(|x, y| {
            x.numel
                .cmp(&y.numel)
                .then_with(|| mean(x.samples).total_cmp(&mean(y.samples)))
        });
    }
    out
}

/// The shapes of the tensors launch `launch` reads, in order, hashed.
fn read_shapes(trace: &Trace, launch: &Launch) -> u64 {
    let kernel = trace.kernel_of(launch);
    let mut hasher = FxHasher::default();
    for (i, arg) in trace.args_of(launch).enumerate() {
        if let ArgRef::Tensor(t) = arg
            && kernel.access_of(i).reads()
        {
            t.layout.shape.hash(&mut hasher);
        }
    }
    hasher.finish()
}

/// An aten op's name without its namespace, overload and in-place mark:
/// `aten::_foreach_addcdiv_.ScalarList` → `_foreach_addcdiv`.
fn op_of(kernel: &str) -> &str {
    let name = kernel.rsplit("::").next().unwrap_or(kernel);
    let name = name.split('.').next().unwrap_or(name);
    name.strip_suffix('_').unwrap_or(name)
}

/// The mean of the finite samples (0 for none).
fn mean(samples: &[f64]) -> f64 {
    let finite: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    finite.iter().sum::<f64>() / finite.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_op_is_named_without_namespace_overload_or_in_place_mark() {
        assert_eq!(super::op_of("aten::addmm.out"), "addmm");
        assert_eq!(super::op_of("aten::addmm"), "addmm");
        assert_eq!(
            super::op_of("aten::_foreach_addcdiv_.ScalarList"),
            "_foreach_addcdiv"
        );
        assert_eq!(super::op_of("aten::mm.out"), "mm");
    }
}

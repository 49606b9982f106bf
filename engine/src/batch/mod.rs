//! One request alone against the same request inside a batch, compared by
//! that request's rows (both traces recorded with `rows`): which launch
//! first makes the request's values depend on what it was batched with.
//!
//! Launches are aligned by kernel name (less Inductor's counter suffix, so
//! that one kernel more in one run does not rename every later one) and by
//! their tensors' dtypes and shapes less the first dimension (the batch's).
//! A tensor is *batched* when its first extents are `T` times each run's
//! batch extent, `T` the same in both (the request's rows: `T` consecutive
//! ones, whether the tensor is `[B, T, D]`-shaped with one row a request or
//! a flattened `[B·T, D]`; or every `B`-th, where a launch moved the batch
//! to the second dimension, `[T, B, D]` seen as `[T·B, D]`, and the launches
//! after it kept that order); one of the same shape in both runs (a weight)
//! is compared whole. A launch is *batch-variant* when the request's rows
//! of what it wrote differ between the runs while every input it read
//! agrees (the request's rows of a batched one, the whole of another): the
//! first is the root cause. One whose inputs already differed carries it.
//!
//! The request's rows of the program's results decide whether a
//! batch-variant launch matters: each result a compared launch last wrote
//! is judged by the request's rows of that write.
//!
//! Where the two batch sizes compiled into other kernels (a reduction split
//! in two for one request, one kernel for a batch), the launches between
//! two aligned ones form a *stretch* on each side, judged as one launch:
//! what it read from before it against what it wrote, each run's tensors
//! paired by dtype and shape less the first extent.

mod walk;

use crate::align::{Alignment, align_by};
use crate::producer::{Origin, ResultWriter};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::time::Duration;
use tritontui_trace::{ArgIndex, ArgRef, Trace};
use walk::{Compared, Judged, Run, compare_launch, compare_stretch};

/// Which request of each run to compare, and how many each run batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Requests {
    /// The request's index in run A's batch, and in run B's.
    pub index: (u64, u64),
    /// How many requests each run batches (A's, B's); None: found from
    /// the first tensor whose shapes differ in their first extent alone,
    /// run A taken to hold one request unless its extent says otherwise
    /// (the two extents in lowest terms).
    pub batch: Option<(u64, u64)>,
}

/// The comparison of one request's rows between two runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchComparison {
    /// How many requests each run batches.
    pub batch: (u64, u64),
    /// The request compared in each run.
    pub request: (u64, u64),
    /// Aligned launch pairs (and stretches) whose request rows (or whole
    /// tensors) could be compared.
    pub compared: usize,
    /// Launches of each run left out of the alignment (those of a
    /// stretch included).
    pub unaligned: (usize, usize),
    /// Launches (and stretches) whose written request rows differ.
    pub differing: usize,
    /// The first batch-variant launch: the root cause.
    pub root_cause: Option<BatchVariant>,
    /// Launches after the root cause whose written request rows differ
    /// because what they read already did.
    pub carried: usize,
    /// Launches before any root cause that read no differing input but
    /// could not be judged: they wrote a batched tensor whose rows a trace
    /// does not hold (over 1,024 rows, or more rows than the launch's
    /// result slots held), or their written rows differ while something
    /// they read could not be compared. The first, as (A's launch, B's
    /// launch).
    pub unjudged: usize,
    pub first_unjudged: Option<(u32, u32)>,
    /// The first launch, before any root cause, that read request rows
    /// which already differed (written by a launch the comparison could not
    /// judge, or handed to the program so: another request).
    pub first_read_differing: Option<(u32, u32)>,
    /// Stretches of launches only one run made (an extra copy), not
    /// compared: what they wrote is seen only where a compared launch
    /// reads it.
    pub one_sided: usize,
    /// The request's rows of the program's results.
    pub results: RequestResults,
}

/// The request's rows of run A's results, each judged by the launch that
/// last wrote it: the request's rows of that write against those of the
/// aligned launch of run B.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RequestResults {
    /// Results whose request rows (or whole bits, for a result of one
    /// shape in both runs) were compared.
    pub compared: usize,
    /// Those that differ, as indices into run A's results.
    pub differing: Vec<usize>,
    /// Results a recorded launch wrote that could not be judged: their
    /// writer's rows are not in the traces, or no compared launch wrote
    /// them, or something unrecorded changed them since.
    pub unknown: usize,
}

impl RequestResults {
    /// Whether the request's rows of every result agree: None unless
    /// every result a recorded launch wrote was judged (and one was).
    pub fn agree(&self) -> Option<bool> {
        (self.compared > 0 && self.unknown == 0).then_some(self.differing.is_empty())
    }
}

/// How each tensor a compared launch wrote compares, by run A's launch
/// and argument.
type WrittenOutcomes = FxHashMap<(u32, ArgIndex), Compared>;

/// A launch whose request rows differ while what it read agrees.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchVariant {
    /// The launch in run A, and in run B (indices into their launches):
    /// the one that wrote the first differing tensor.
    pub a: u32,
    pub b: u32,
    /// Each argument of A's launch whose request rows differ.
    pub args: Vec<RowDifference>,
    /// Where the root cause is a stretch the runs compiled into other
    /// kernels: each run's launches of it, in order (empty for one aligned
    /// launch).
    pub stretch: (Vec<u32>, Vec<u32>),
}

/// The request rows of one argument that differ between the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowDifference {
    /// The argument.
    pub arg: ArgIndex,
    /// The request's rows in it (`T`); 0 for a tensor compared whole.
    pub rows: u64,
    /// The request-relative indices of the rows that differ (empty for a
    /// tensor compared whole).
    pub differing: Vec<u64>,
}

impl BatchComparison {
    /// Compares request `requests.index` of run `a` with that of run `b`
    /// (their alignment searching at most `deadline`), and, with what last
    /// wrote each of run A's results (`writers`), the request's rows of
    /// the results; None unless both traces hold row hashes and their
    /// batch extents are known or found.
    pub fn of(
        a: &Trace,
        b: &Trace,
        requests: Requests,
        deadline: Duration,
        writers: Option<&[ResultWriter]>,
    ) -> Option<BatchComparison> {
        if !a.has_rows() || !b.has_rows() {
            return None;
        }
        let alignment = align_by(a, b, keys_by_rows, deadline);
        let batch = match requests.batch {
            Some(batch) => batch,
            None => found_batch(a, b, &alignment)?,
        };
        if batch.0 == 0
            || batch.1 == 0
            || requests.index.0 >= batch.0
            || requests.index.1 >= batch.1
        {
            return None;
        }
        let mut runs = (
            Run::new(a, batch.0, requests.index.0),
            Run::new(b, batch.1, requests.index.1),
        );
        let mut comparison = BatchComparison {
            batch,
            request: requests.index,
            compared: 0,
            unaligned: (0, 0),
            differing: 0,
            root_cause: None,
            carried: 0,
            unjudged: 0,
            first_unjudged: None,
            first_read_differing: None,
            one_sided: 0,
            results: RequestResults::default(),
        };
        let mut written = WrittenOutcomes::default();
        let mut stretch: (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
        for row in &alignment.rows {
            // Launches that only hand out memory (`empty_strided`) neither
            // end a stretch nor join one: they write nothing to compare.
            let (Some(ia), Some(ib)) = (row.a(), row.b()) else {
                stretch
                    .0
                    .extend(row.a().filter(|&i| !runs.0.allocates_only(i)));
                stretch
                    .1
                    .extend(row.b().filter(|&i| !runs.1.allocates_only(i)));
                continue;
            };
            if runs.0.allocates_only(ia) && runs.1.allocates_only(ib) {
                continue;
            }
            comparison.judge_stretch(&mut runs, std::mem::take(&mut stretch), &mut written);
            let judged = compare_launch(&mut runs, ia, ib);
            comparison.record(judged, (ia, ib), (Vec::new(), Vec::new()), &mut written);
        }
        comparison.judge_stretch(&mut runs, stretch, &mut written);
        if let Some(writers) = writers {
            comparison.results = request_results(writers, &written);
        }
        Some(comparison)
    }

    /// Whether the request's rows are the same in both runs as far as the
    /// traces say: every launch compared wrote the same request rows,
    /// none read differing ones, none was left unjudged, and no launch
    /// only one run made went uncompared.
    pub fn rows_identical(&self) -> bool {
        self.compared > 0
            && self.differing == 0
            && self.unjudged == 0
            && self.first_read_differing.is_none()
            && self.one_sided == 0
    }

    /// Judges a stretch of launches the runs compiled differently.
    fn judge_stretch<'t>(
        &mut self,
        runs: &mut (Run<'t>, Run<'t>),
        stretch: (Vec<u32>, Vec<u32>),
        written: &mut WrittenOutcomes,
    ) {
        self.unaligned.0 += stretch.0.len();
        self.unaligned.1 += stretch.1.len();
        match compare_stretch(runs, &stretch.0, &stretch.1) {
            Some(judged) => {
                let at = (stretch.0[0], stretch.1[0]);
                self.record(judged, at, stretch, written);
            }
            None if stretch.0.len() + stretch.1.len() > 0 => self.one_sided += 1,
            None => {}
        }
    }

    /// Takes in what launch (or stretch) `at` read and wrote, noting how
    /// each tensor it wrote compares in `written`.
    fn record(
        &mut self,
        judged: Judged,
        at: (u32, u32),
        stretch: (Vec<u32>, Vec<u32>),
        written: &mut WrittenOutcomes,
    ) {
        let Judged { inputs, outputs } = judged;
        for w in &outputs {
            written
                .entry((w.launches.0, w.arg))
                .or_insert_with(|| w.compared.clone());
        }
        if outputs.is_empty() && inputs == Compared::Equal {
            self.compared += 1;
            return;
        }
        self.compared += usize::from(inputs != Compared::Unknown);
        let undecided = self.root_cause.is_none();
        if undecided && matches!(inputs, Compared::Differs(_)) {
            self.first_read_differing.get_or_insert(at);
        }
        let differing: Vec<_> = outputs
            .iter()
            .filter(|w| matches!(w.compared, Compared::Differs(_)))
            .collect();
        let unknown = outputs.iter().any(|w| w.compared == Compared::Unknown)
            || inputs == Compared::Unknown && !differing.is_empty();
        if unknown && undecided && !matches!(inputs, Compared::Differs(_)) {
            self.unjudged += 1;
            self.first_unjudged.get_or_insert(at);
        }
        let Some(first) = differing.first() else {
            return;
        };
        self.differing += 1;
        match (&self.root_cause, &inputs) {
            (None, Compared::Equal) => {
                let launches = first.launches;
                self.root_cause = Some(BatchVariant {
                    a: launches.0,
                    b: launches.1,
                    args: differing
                        .iter()
                        .filter(|w| w.launches == launches)
                        .map(|w| RowDifference {
                            arg: w.arg,
                            rows: w.rows,
                            differing: match &w.compared {
                                Compared::Differs(rows) => rows.clone(),
                                _ => Vec::new(),
                            },
                        })
                        .collect(),
                    stretch,
                });
            }
            (Some(_), Compared::Differs(_)) => self.carried += 1,
            _ => {}
        }
    }
}

/// Judges each of run A's results a recorded launch wrote by how that
/// write compared (`written`).
fn request_results(writers: &[ResultWriter], written: &WrittenOutcomes) -> RequestResults {
    let mut results = RequestResults::default();
    for (i, writer) in writers.iter().enumerate() {
        let Origin::Launch(launch, arg) = writer.origin else {
            continue;
        };
        let outcome = written
            .get(&(launch, arg))
            .filter(|_| writer.holds != Some(false));
        match outcome {
            Some(Compared::Equal) => results.compared += 1,
            Some(Compared::Differs(_)) => {
                results.compared += 1;
                results.differing.push(i);
            }
            Some(Compared::Unknown) | None => results.unknown += 1,
        }
    }
    results
}

/// The batch extents from the first aligned pair of tensors whose shapes
/// differ in their first extent alone, in lowest terms (run A holding one
/// request unless that extent says otherwise).
fn found_batch(a: &Trace, b: &Trace, alignment: &Alignment) -> Option<(u64, u64)> {
    alignment.rows.iter().find_map(|row| {
        let (la, lb) = (
            &a.launches[row.a()? as usize],
            &b.launches[row.b()? as usize],
        );
        a.args_of(la)
            .zip(b.args_of(lb))
            .find_map(|(x, y)| match (x, y) {
                (ArgRef::Tensor(x), ArgRef::Tensor(y)) => {
                    let ((&na, rest_a), (&nb, rest_b)) =
                        (x.layout.shape.split_first()?, y.layout.shape.split_first()?);
                    (na != nb && rest_a == rest_b && na > 0 && nb > 0).then(|| {
                        let common = gcd(na, nb);
                        (na / common, nb / common)
                    })
                }
                _ => None,
            })
    })
}

fn gcd(mut x: u64, mut y: u64) -> u64 {
    while y != 0 {
        (x, y) = (y, x % y);
    }
    x
}

/// A launch's kernel name (less Inductor's counter suffix) and its tensor
/// arguments' dtypes and shapes less the first extent.
type RowKey = (String, Vec<(String, Vec<u64>)>);

/// A kernel's name without the counter Inductor ends the names of its
/// generated kernels with (`triton_poi_fused_gelu_2`, `cpp_fused_add_0`):
/// one graph's kernels are numbered in order, so one kernel more in one
/// run's graph (a reduction split in two) renumbers every later one.
fn kernel_family(name: &str) -> &str {
    if !(name.starts_with("triton_") || name.starts_with("cpp_")) {
        return name;
    }
    match name.rsplit_once('_') {
        Some((family, counter))
            if !counter.is_empty() && counter.bytes().all(|c| c.is_ascii_digit()) =>
        {
            family
        }
        _ => name,
    }
}

/// Alignment keys of the given launches of two traces: equal keys mean
/// the same kernel family and the same dtypes and shapes less the first
/// extent (scalars left out: a kernel compiled for dynamic shapes, as a
/// second batch size in one process is, takes its sizes as arguments).
fn keys_by_rows(a: &Trace, la: &[u32], b: &Trace, lb: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut keys: FxHashMap<RowKey, u32> = FxHashMap::default();
    let mut key_of = |t: &Trace, i: u32| -> u32 {
        let launch = &t.launches[i as usize];
        let key = (
            kernel_family(&t.kernel_of(launch).name).to_owned(),
            t.args_of(launch)
                .filter_map(|arg| match arg {
                    ArgRef::Tensor(x) => Some((
                        x.layout.dtype.clone(),
                        x.layout.shape.iter().skip(1).copied().collect(),
                    )),
                    ArgRef::Scalar(_) => None,
                })
                .collect(),
        );
        let next = keys.len() as u32;
        *keys.entry(key).or_insert(next)
    };
    let ka = la.iter().map(|&i| key_of(a, i)).collect();
    let kb = lb.iter().map(|&i| key_of(b, i)).collect();
    (ka, kb)
}

#[cfg(test)]
mod tests {
    use super::kernel_family;
    use super::walk::batched_rows;

    #[test]
    fn inductor_s_counter_is_left_out_of_a_kernel_s_family() {
        assert_eq!(
            kernel_family("triton_poi_fused_gelu_2"),
            "triton_poi_fused_gelu"
        );
        assert_eq!(kernel_family("cpp_fused_add_mean_0"), "cpp_fused_add_mean");
        assert_eq!(kernel_family("aten::addmm.out"), "aten::addmm.out");
        assert_eq!(
            kernel_family("triton_poi_fused_gelu_x"),
            "triton_poi_fused_gelu_x"
        );
    }

    #[test]
    fn a_request_s_rows_are_found_in_both_shapes_of_a_batched_tensor() {
        // [B, T, D]: one row a request.
        assert_eq!(batched_rows(&[1, 16, 8], 1, &[64, 16, 8], 64), Some(1));
        // [B·T, D]: T rows a request.
        assert_eq!(batched_rows(&[16, 8], 1, &[1024, 8], 64), Some(16));
        // A weight: the same shape in both runs, compared whole.
        assert_eq!(batched_rows(&[8, 8], 1, &[8, 8], 64), None);
        // Another extent, another shape: nothing to compare.
        assert_eq!(batched_rows(&[3, 8], 1, &[64, 8], 64), None);
        assert_eq!(batched_rows(&[16, 8], 1, &[1024, 4], 64), None);
    }
}

//! One request alone against the same request inside a batch, compared by
//! that request's rows (both traces recorded with `rows`): which launch
//! first makes the request's values depend on what it was batched with.
//!
//! Launches are aligned by kernel name and by their tensors' dtypes and
//! shapes less the first dimension (the batch's). A tensor is *batched*
//! when its first extents are `T` times each run's batch extent, `T` the
//! same in both (the request's rows: `T` consecutive ones, whether the
//! tensor is `[B, T, D]`-shaped with one row a request or a flattened
//! `[B·T, D]`); one of the same shape in both runs (a weight) is compared
//! whole. A launch is *batch-variant* when the request's rows of what it
//! wrote differ between the runs while every input it read agrees (the
//! request's rows of a batched one, the whole of another): the first is
//! the root cause. One whose inputs already differed carries it.

use crate::align::{Alignment, align_by};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::time::Duration;
use tritontui_trace::{ArgIndex, ArgRef, TensorRef, Trace};

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
    /// Aligned launch pairs whose request rows (or whole tensors) could
    /// be compared.
    pub compared: usize,
    /// Launches of each run left out of the alignment.
    pub unaligned: (usize, usize),
    /// The first batch-variant launch: the root cause.
    pub root_cause: Option<BatchVariant>,
    /// Launches after the root cause whose written request rows differ
    /// because what they read already did.
    pub carried: usize,
    /// Launches before any root cause that read no differing input and
    /// wrote a batched tensor whose rows a trace does not hold (over 1,024
    /// rows, or more rows than the launch's result slots held): they
    /// could not be judged. The first, as (A's launch, B's launch).
    pub unjudged: usize,
    pub first_unjudged: Option<(u32, u32)>,
}

/// A launch whose request rows differ while what it read agrees.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchVariant {
    /// The launch in run A, and in run B (indices into their launches).
    pub a: u32,
    pub b: u32,
    /// Each written argument whose request rows differ.
    pub args: Vec<RowDifference>,
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

/// How one tensor compares between the runs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Compared {
    Equal,
    /// Differs: the request-relative rows that do (empty: compared whole).
    Differs(Vec<u64>),
    /// Not comparable: rows not recorded, or shapes that do not batch.
    Unknown,
}

impl BatchComparison {
    /// Compares request `requests.index` of run `a` with that of run `b`
    /// (their alignment searching at most `deadline`); None unless both traces hold row hashes and their batch extents are
    /// known or found.
    pub fn of(
        a: &Trace,
        b: &Trace,
        requests: Requests,
        deadline: Duration,
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
            root_cause: None,
            carried: 0,
            unjudged: 0,
            first_unjudged: None,
        };
        for row in &alignment.rows {
            let (Some(ia), Some(ib)) = (row.a(), row.b()) else {
                comparison.unaligned.0 += usize::from(row.a().is_some());
                comparison.unaligned.1 += usize::from(row.b().is_some());
                continue;
            };
            let (inputs, outputs) = compare_launch(&mut runs, ia, ib);
            if outputs.is_empty() && inputs == Compared::Equal {
                comparison.compared += 1;
                continue;
            }
            comparison.compared += usize::from(inputs != Compared::Unknown);
            let unknown = outputs.iter().any(|(_, _, c)| *c == Compared::Unknown);
            if unknown && comparison.root_cause.is_none() && !matches!(inputs, Compared::Differs(_))
            {
                comparison.unjudged += 1;
                comparison.first_unjudged.get_or_insert((ia, ib));
            }
            let differing: Vec<RowDifference> = outputs
                .into_iter()
                .filter_map(|(arg, rows, compared)| match compared {
                    Compared::Differs(differing) => Some(RowDifference {
                        arg,
                        rows,
                        differing,
                    }),
                    _ => None,
                })
                .collect();
            if differing.is_empty() {
                continue;
            }
            match (&comparison.root_cause, inputs) {
                (None, Compared::Equal) => {
                    comparison.root_cause = Some(BatchVariant {
                        a: ia,
                        b: ib,
                        args: differing,
                    });
                }
                (Some(_), Compared::Differs(_)) => comparison.carried += 1,
                _ => {}
            }
        }
        Some(comparison)
    }
}

/// One run as the comparison walks it.
struct Run<'t> {
    trace: &'t Trace,
    /// Its batch extent.
    extent: u64,
    /// The request compared.
    request: u64,
    /// The row hashes each address held after the last launch that wrote
    /// it, for an argument a launch reads and writes.
    last_written: FxHashMap<u64, &'t [u64]>,
}

impl<'t> Run<'t> {
    fn new(trace: &'t Trace, extent: u64, request: u64) -> Run<'t> {
        Run {
            trace,
            extent,
            request,
            last_written: FxHashMap::default(),
        }
    }

    /// The rows `t` held before the launch: those its last writer left
    /// where the launch also writes it, else its own.
    fn before(&self, t: &TensorRef<'t>, writes: bool) -> Option<&'t [u64]> {
        if writes {
            self.last_written.get(&t.ptr).copied()
        } else {
            t.rows
        }
    }

    /// The request's `per_request` rows among `rows`.
    fn request_rows(&self, rows: Option<&'t [u64]>, per_request: u64) -> Option<&'t [u64]> {
        let start = usize::try_from(self.request * per_request).ok()?;
        rows?.get(start..start + usize::try_from(per_request).ok()?)
    }
}

/// Compares aligned launches `ia` of run A and `ib` of run B: whether
/// everything they read agrees, and each written argument (with the
/// request's rows in it) and how it compares.
fn compare_launch<'t>(
    runs: &mut (Run<'t>, Run<'t>),
    ia: u32,
    ib: u32,
) -> (Compared, Vec<(ArgIndex, u64, Compared)>) {
    let (ra, rb) = runs;
    let (la, lb) = (
        &ra.trace.launches[ia as usize],
        &rb.trace.launches[ib as usize],
    );
    let kernel = ra.trace.kernel_of(la);
    let mut inputs = Compared::Equal;
    let mut outputs = Vec::new();
    let mut written = Vec::new();
    for (i, (arg_a, arg_b)) in ra.trace.args_of(la).zip(rb.trace.args_of(lb)).enumerate() {
        let (ArgRef::Tensor(ta), ArgRef::Tensor(tb)) = (arg_a, arg_b) else {
            continue;
        };
        if ta.allocated || tb.allocated {
            continue;
        }
        let Ok(arg) = ArgIndex::try_from(i) else {
            continue;
        };
        let access = kernel.access_of(i);
        let writes = access.writes() || ta.written || tb.written;
        if access.reads() {
            // A tensor only read holds after the launch what it held before.
            let whole = |t: &TensorRef<'_>| if writes { t.pre } else { t.pre.or(t.post) };
            let read = compare_tensors(
                ra,
                rb,
                (&ta, ra.before(&ta, writes), whole(&ta)),
                (&tb, rb.before(&tb, writes), whole(&tb)),
            );
            inputs = worse(inputs, read.1);
        }
        if writes {
            let (rows, compared) =
                compare_tensors(ra, rb, (&ta, ta.rows, ta.post), (&tb, tb.rows, tb.post));
            outputs.push((arg, rows, compared));
            written.push((ta.ptr, ta.rows, tb.ptr, tb.rows));
        }
    }
    for (pa, rows_a, pb, rows_b) in written {
        match rows_a {
            Some(rows) => ra.last_written.insert(pa, rows),
            None => ra.last_written.remove(&pa),
        };
        match rows_b {
            Some(rows) => rb.last_written.insert(pb, rows),
            None => rb.last_written.remove(&pb),
        };
    }
    (inputs, outputs)
}

/// One tensor of each run as the comparison sees it: the tensor, its row
/// hashes, its whole hash.
type Seen<'a, 't> = (&'a TensorRef<'t>, Option<&'t [u64]>, Option<u64>);

/// Compares a tensor of each run: by the request's rows where it is
/// batched, whole where it has the same shape in both runs. Returns the
/// request's rows in it (0 compared whole) and the outcome.
fn compare_tensors<'t>(
    ra: &Run<'t>,
    rb: &Run<'t>,
    a: Seen<'_, 't>,
    b: Seen<'_, 't>,
) -> (u64, Compared) {
    let (sa, sb) = (&a.0.layout.shape, &b.0.layout.shape);
    if let Some(per_request) = batched_rows(sa, ra.extent, sb, rb.extent) {
        let compared = match (
            ra.request_rows(a.1, per_request),
            rb.request_rows(b.1, per_request),
        ) {
            (Some(x), Some(y)) if x == y => Compared::Equal,
            (Some(x), Some(y)) => Compared::Differs(
                (0..per_request)
                    .filter(|&k| x[k as usize] != y[k as usize])
                    .collect(),
            ),
            _ => Compared::Unknown,
        };
        return (per_request, compared);
    }
    let compared = match (sa == sb, a.2, b.2) {
        (true, Some(x), Some(y)) if x == y => Compared::Equal,
        (true, Some(_), Some(_)) => Compared::Differs(Vec::new()),
        _ => Compared::Unknown,
    };
    (0, compared)
}

/// The request's rows in a tensor of shapes `a` and `b` when it is batched
/// by extents `ea` and `eb` (each first extent that many requests of the
/// same number of rows, the rest of the shape equal); None otherwise.
fn batched_rows(a: &[u64], ea: u64, b: &[u64], eb: u64) -> Option<u64> {
    let ((&na, rest_a), (&nb, rest_b)) = (a.split_first()?, b.split_first()?);
    if rest_a != rest_b || na == nb && ea != eb || !na.is_multiple_of(ea) || !nb.is_multiple_of(eb)
    {
        return None;
    }
    let per_request = na / ea;
    (per_request > 0 && per_request == nb / eb).then_some(per_request)
}

/// The worse of two outcomes: a difference over an unknown over equality.
fn worse(a: Compared, b: Compared) -> Compared {
    match (a, b) {
        (d @ Compared::Differs(_), _) | (_, d @ Compared::Differs(_)) => d,
        (Compared::Unknown, _) | (_, Compared::Unknown) => Compared::Unknown,
        _ => Compared::Equal,
    }
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

/// A launch's kernel name and its arguments' dtypes and shapes less the
/// first extent (None for a scalar).
type RowKey = (String, Vec<Option<(String, Vec<u64>)>>);

/// Alignment keys of the given launches of two traces: equal keys mean
/// the same kernel name and the same dtypes and shapes less the first
/// extent.
fn keys_by_rows(a: &Trace, la: &[u32], b: &Trace, lb: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut keys: FxHashMap<RowKey, u32> = FxHashMap::default();
    let mut key_of = |t: &Trace, i: u32| -> u32 {
        let launch = &t.launches[i as usize];
        let key = (
            t.kernel_of(launch).name.clone(),
            t.args_of(launch)
                .map(|arg| match arg {
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
    use super::batched_rows;

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

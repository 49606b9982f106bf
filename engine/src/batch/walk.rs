//! What the batch comparison sees of each run as it walks them: the
//! request's rows of every tensor a launch (or a stretch of launches the
//! runs compiled differently) read and wrote, compared between the runs.

use rustc_hash::FxHashMap;
use std::borrow::Cow;
use tritontui_trace::{ArgIndex, ArgRef, TensorRef, Trace};

/// How one tensor compares between the runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Compared {
    Equal,
    /// Differs: the request-relative rows that do (empty: compared whole).
    Differs(Vec<u64>),
    /// Not comparable: rows not recorded, or shapes that do not batch.
    Unknown,
}

/// The worse of two outcomes: a difference over an unknown over equality.
pub(super) fn worse(a: Compared, b: Compared) -> Compared {
    match (a, b) {
        (d @ Compared::Differs(_), _) | (_, d @ Compared::Differs(_)) => d,
        (Compared::Unknown, _) | (_, Compared::Unknown) => Compared::Unknown,
        _ => Compared::Equal,
    }
}

/// One tensor a launch wrote, compared between the runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Written {
    /// The launch of each run that wrote it.
    pub(super) launches: (u32, u32),
    /// Its argument in run A's launch.
    pub(super) arg: ArgIndex,
    /// The request's rows in it (0: compared whole).
    pub(super) rows: u64,
    pub(super) compared: Compared,
}

/// What a launch, or a stretch of launches, read and wrote: how everything
/// it read compares, and each tensor it wrote.
pub(super) struct Judged {
    pub(super) inputs: Compared,
    pub(super) outputs: Vec<Written>,
}

/// One run as the comparison walks it.
pub(super) struct Run<'t> {
    trace: &'t Trace,
    /// Its batch extent.
    extent: u64,
    /// The request compared.
    request: u64,
    /// The row hashes each address held after the last launch that wrote
    /// it, with the shape that launch hashed them in, for an argument a
    /// launch reads and writes (perhaps as another view: a matmul's
    /// flattened `[B·T, D]` output updated in place as `[B, T, D]`).
    last_written: FxHashMap<u64, (&'t [u64], &'t [u64])>,
    /// Addresses whose rows interleave the requests, each with the first
    /// extent (`T·N`) of the views whose row `t·N + r` is request `r`'s
    /// `t`-th (`N` the batch extent): see [`Run::note_layouts`].
    interleaved: FxHashMap<u64, u64>,
}

/// One tensor of a run as the comparison sees it.
#[derive(Clone, Copy)]
struct Seen<'t> {
    ptr: u64,
    dtype: &'t str,
    /// The shape its row hashes are of.
    shape: &'t [u64],
    rows: Option<&'t [u64]>,
    /// Its whole hash.
    whole: Option<u64>,
    /// Whether its rows interleave the requests (see
    /// [`Run::note_layouts`]), as the launches before it left them.
    interleaved: bool,
}

/// A tensor argument of a launch that is not memory handed out unwritten:
/// its index, the tensor, whether the launch reads it and whether it
/// writes it.
type Access<'t> = (ArgIndex, TensorRef<'t>, bool, bool);

/// A tensor a stretch wrote: its launch and argument, and whether a later
/// launch of the stretch read it (then it need not pair with the other
/// run's: a split reduction's partial sums).
struct StretchOutput<'t> {
    launch: u32,
    arg: ArgIndex,
    seen: Seen<'t>,
    read_within: bool,
}

impl<'t> Run<'t> {
    pub(super) fn new(trace: &'t Trace, extent: u64, request: u64) -> Run<'t> {
        Run {
            trace,
            extent,
            request,
            last_written: FxHashMap::default(),
            interleaved: FxHashMap::default(),
        }
    }

    /// `t` as its launch left it.
    fn after(&self, t: &TensorRef<'t>) -> Seen<'t> {
        Seen {
            ptr: t.ptr,
            dtype: &t.layout.dtype,
            shape: &t.layout.shape,
            rows: t.rows,
            whole: t.post,
            interleaved: self.interleaves(t.ptr, &t.layout.shape),
        }
    }

    /// Whether the rows of a view of shape `shape` at `ptr` interleave the
    /// requests.
    fn interleaves(&self, ptr: u64, shape: &[u64]) -> bool {
        shape
            .first()
            .is_some_and(|first| self.interleaved.get(&ptr) == Some(first))
    }

    /// The request's `per_request` rows among those of `seen`: consecutive
    /// ones, or every `N`-th where its rows interleave the requests.
    fn request_rows(&self, seen: &Seen<'t>, per_request: u64) -> Option<Cow<'t, [u64]>> {
        let rows = seen.rows?;
        let count = usize::try_from(per_request).ok()?;
        let request = usize::try_from(self.request).ok()?;
        if seen.interleaved {
            let stride = usize::try_from(self.extent).ok()?;
            let picked: Option<Vec<u64>> = (0..count)
                .map(|t| rows.get(t * stride + request).copied())
                .collect();
            return picked.map(Cow::Owned);
        }
        let start = request * count;
        rows.get(start..start + count).map(Cow::Borrowed)
    }

    /// Notes which tensors a launch wrote hold the requests' rows
    /// interleaved: one written `[T, N, ...]` (`N` the batch extent, `T`
    /// another) with the extents of a `[N, ...]` tensor the launch read, so
    /// the batch moved to its second dimension (`nn.MultiheadAttention`
    /// with `batch_first` runs its projections on `[T, N, D]`), seen as
    /// `[T·N, ...]`; and one written with the first extent of an
    /// interleaved tensor the launch read (a matmul, a row-wise kernel:
    /// row `i` of the output is made from row `i` of the input). Any other
    /// write at an address ends what it held.
    fn note_layouts<'a>(&mut self, tensors: impl Iterator<Item = &'a Access<'t>> + Clone)
    where
        't: 'a,
    {
        let n = self.extent;
        let read = || {
            tensors
                .clone()
                .filter(|(_, _, reads, _)| *reads)
                .map(|(_, t, ..)| t)
        };
        let interleaved_firsts: Vec<u64> = read()
            .filter(|t| self.interleaves(t.ptr, &t.layout.shape))
            .filter_map(|t| t.layout.shape.first().copied())
            .collect();
        for (_, t, _, writes) in tensors.clone() {
            if !writes {
                continue;
            }
            let shape = &t.layout.shape[..];
            let batch_moved = n > 1
                && shape.len() >= 3
                && shape[1] == n
                && shape[0] != n
                && read().any(|r| {
                    r.layout.shape.first() == Some(&n) && same_extents(&r.layout.shape, shape)
                });
            let kept = shape
                .first()
                .filter(|first| interleaved_firsts.contains(first));
            match (batch_moved, kept) {
                (true, _) => self.interleaved.insert(t.ptr, shape[0] * n),
                (false, Some(&first)) => self.interleaved.insert(t.ptr, first),
                (false, None) => self.interleaved.remove(&t.ptr),
            };
        }
    }

    /// Each tensor argument of launch `index`, in order (scalars left
    /// out: a kernel compiled for dynamic shapes takes its sizes as more
    /// arguments): None for memory handed out unwritten.
    fn tensors(&self, index: u32) -> Vec<Option<Access<'t>>> {
        let trace = self.trace;
        let launch = &trace.launches[index as usize];
        let kernel = trace.kernel_of(launch);
        trace
            .args_of(launch)
            .enumerate()
            .filter_map(|(i, arg)| match arg {
                ArgRef::Tensor(t) => Some((i, t)),
                ArgRef::Scalar(_) => None,
            })
            .map(|(i, t)| {
                let arg = ArgIndex::try_from(i).ok()?;
                let access = kernel.access_of(i);
                let writes = access.writes() || t.written;
                (!t.allocated).then_some((arg, t, access.reads(), writes))
            })
            .collect()
    }

    /// Whether launch `index` has no tensor argument but memory it hands
    /// out unwritten (an allocation).
    pub(super) fn allocates_only(&self, index: u32) -> bool {
        self.tensors(index).iter().all(Option::is_none)
    }

    /// What `t` held before a launch that reads it: where the launch
    /// also writes it, the rows its last writer left, in that writer's
    /// shape; else its own (a tensor only read holds after the launch
    /// what it held before).
    fn read(&self, t: &TensorRef<'t>, writes: bool) -> Seen<'t> {
        if !writes {
            return Seen {
                whole: t.pre.or(t.post),
                ..self.after(t)
            };
        }
        let (rows, shape) = match self.last_written.get(&t.ptr) {
            Some(&(rows, shape)) => (Some(rows), shape),
            None => (None, &t.layout.shape[..]),
        };
        Seen {
            shape,
            rows,
            whole: t.pre,
            interleaved: self.interleaves(t.ptr, shape),
            ..self.after(t)
        }
    }

    /// Notes what a launch wrote, for the next launch that reads and
    /// writes the same memory.
    fn note_written(&mut self, t: &TensorRef<'t>) {
        match t.rows {
            Some(rows) => self.last_written.insert(t.ptr, (rows, &t.layout.shape)),
            None => self.last_written.remove(&t.ptr),
        };
    }

    /// What a stretch of this run's launches read from before it (in
    /// order, each address once) and what it wrote (the last write of each
    /// address).
    fn stretch(&mut self, launches: &[u32]) -> (Vec<Seen<'t>>, Vec<StretchOutput<'t>>) {
        let mut inputs: Vec<Seen<'t>> = Vec::new();
        let mut outputs: Vec<StretchOutput<'t>> = Vec::new();
        for &index in launches {
            let tensors: Vec<Access<'t>> = self.tensors(index).into_iter().flatten().collect();
            for (_, t, reads, writes) in &tensors {
                if !reads {
                    continue;
                }
                match outputs.iter_mut().find(|o| o.seen.ptr == t.ptr) {
                    Some(output) => output.read_within = true,
                    None if !inputs.iter().any(|i| i.ptr == t.ptr) => {
                        inputs.push(self.read(t, *writes));
                    }
                    None => {}
                }
            }
            self.note_layouts(tensors.iter());
            for (arg, t, _, writes) in tensors {
                if !writes {
                    continue;
                }
                self.note_written(&t);
                let output = StretchOutput {
                    launch: index,
                    arg,
                    seen: self.after(&t),
                    read_within: false,
                };
                match outputs.iter_mut().find(|o| o.seen.ptr == t.ptr) {
                    Some(earlier) => *earlier = output,
                    None => outputs.push(output),
                }
            }
        }
        (inputs, outputs)
    }
}

/// Compares aligned launches `ia` of run A and `ib` of run B, argument by
/// argument.
pub(super) fn compare_launch<'t>(runs: &mut (Run<'t>, Run<'t>), ia: u32, ib: u32) -> Judged {
    let (ra, rb) = runs;
    let (ta, tb) = (ra.tensors(ia), rb.tensors(ib));
    let pairs: Vec<(&Access<'t>, &Access<'t>)> = ta
        .iter()
        .zip(&tb)
        .filter_map(|(a, b)| Some((a.as_ref()?, b.as_ref()?)))
        .collect();
    // What it read, as the launches before it left it.
    let mut inputs = Compared::Equal;
    for ((_, a, reads_a, writes_a), (_, b, reads_b, writes_b)) in pairs.iter().copied() {
        let writes = *writes_a || *writes_b;
        if *reads_a || *reads_b {
            let read = compare_tensors(ra, rb, &ra.read(a, writes), &rb.read(b, writes));
            inputs = worse(inputs, read.1);
        }
    }
    // What it wrote, in the layout it wrote it in.
    ra.note_layouts(ta.iter().flatten());
    rb.note_layouts(tb.iter().flatten());
    let mut outputs = Vec::new();
    for ((arg, a, _, writes_a), (_, b, _, writes_b)) in pairs {
        if *writes_a || *writes_b {
            let (rows, compared) = compare_tensors(ra, rb, &ra.after(a), &rb.after(b));
            outputs.push(Written {
                launches: (ia, ib),
                arg: *arg,
                rows,
                compared,
            });
        }
    }
    for (run, tensors) in [(ra, ta), (rb, tb)] {
        for (_, t, _, writes) in tensors.iter().flatten() {
            if *writes {
                run.note_written(t);
            }
        }
    }
    Judged { inputs, outputs }
}

/// Compares two stretches of launches the runs compiled differently (a
/// split reduction in one, one kernel in the other): what each read from
/// before it and what each wrote, paired by dtype and shape less the first
/// extent, in order. An input only one stretch read makes what they read
/// unknown; a tensor one stretch wrote that pairs with none of
/// the other's is compared as unknown unless a later launch of its own
/// stretch read it (a partial result). None when either stretch is empty
/// (launches one run made besides the other's, such as an extra copy).
pub(super) fn compare_stretch<'t>(
    runs: &mut (Run<'t>, Run<'t>),
    a: &[u32],
    b: &[u32],
) -> Option<Judged> {
    let (ra, rb) = runs;
    let ((inputs_a, outputs_a), (inputs_b, outputs_b)) = (ra.stretch(a), rb.stretch(b));
    if a.is_empty() || b.is_empty() {
        return None;
    }
    // An input only one stretch read (a buffer launches besides the other
    // run's wrote) cannot be said to agree.
    let pairs = paired(&inputs_a, &inputs_b, |s| s);
    let mut inputs = if pairs.len() == inputs_a.len() && pairs.len() == inputs_b.len() {
        Compared::Equal
    } else {
        Compared::Unknown
    };
    for (x, y) in pairs {
        inputs = worse(
            inputs,
            compare_tensors(ra, rb, &inputs_a[x], &inputs_b[y]).1,
        );
    }
    let pairs = paired(&outputs_a, &outputs_b, |o| &o.seen);
    let mut outputs: Vec<Written> = pairs
        .iter()
        .map(|&(x, y)| {
            let (oa, ob) = (&outputs_a[x], &outputs_b[y]);
            let (rows, compared) = compare_tensors(ra, rb, &oa.seen, &ob.seen);
            Written {
                launches: (oa.launch, ob.launch),
                arg: oa.arg,
                rows,
                compared,
            }
        })
        .collect();
    let unpaired = |outputs: &[StretchOutput<'_>], side: fn(&(usize, usize)) -> usize| {
        outputs
            .iter()
            .enumerate()
            .any(|(i, o)| !o.read_within && !pairs.iter().any(|p| side(p) == i))
    };
    if unpaired(&outputs_a, |p| p.0) || unpaired(&outputs_b, |p| p.1) {
        outputs.push(Written {
            launches: (a[0], b[0]),
            arg: ArgIndex::default(),
            rows: 0,
            compared: Compared::Unknown,
        });
    }
    Some(Judged { inputs, outputs })
}

/// Pairs two runs' tensors by dtype and shape less the first extent: the
/// k-th of one key in A with the k-th of that key in B.
fn paired<'t, T>(a: &[T], b: &[T], seen: impl Fn(&T) -> &Seen<'t>) -> Vec<(usize, usize)> {
    let key = |t: &T| {
        let seen = seen(t);
        (seen.dtype, seen.shape.get(1..).unwrap_or(&[]))
    };
    let mut taken = vec![false; b.len()];
    a.iter()
        .enumerate()
        .filter_map(|(x, ta)| {
            let y = (0..b.len()).find(|&y| !taken[y] && key(&b[y]) == key(ta))?;
            taken[y] = true;
            Some((x, y))
        })
        .collect()
}

/// Compares a tensor of each run: by the request's rows where it is
/// batched, whole where it has the same shape in both runs. Returns the
/// request's rows in it (0 compared whole) and the outcome.
fn compare_tensors<'t>(ra: &Run<'t>, rb: &Run<'t>, a: &Seen<'t>, b: &Seen<'t>) -> (u64, Compared) {
    let (sa, sb) = (a.shape, b.shape);
    if let Some(per_request) = batched_rows(sa, ra.extent, sb, rb.extent) {
        let compared = match (
            ra.request_rows(a, per_request),
            rb.request_rows(b, per_request),
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
    let compared = match (sa == sb, a.whole, b.whole) {
        (true, Some(x), Some(y)) if x == y => Compared::Equal,
        (true, Some(_), Some(_)) => Compared::Differs(Vec::new()),
        _ => Compared::Unknown,
    };
    (0, compared)
}

/// Whether two shapes hold the same extents, in any order.
fn same_extents(a: &[u64], b: &[u64]) -> bool {
    let sorted = |s: &[u64]| {
        let mut v = s.to_vec();
        v.sort_unstable();
        v
    };
    a.len() == b.len() && sorted(a) == sorted(b)
}

/// The request's rows in a tensor of shapes `a` and `b` when it is batched
/// by extents `ea` and `eb` (each first extent that many requests of the
/// same number of rows, the rest of the shape equal); None otherwise.
pub(super) fn batched_rows(a: &[u64], ea: u64, b: &[u64], eb: u64) -> Option<u64> {
    let ((&na, rest_a), (&nb, rest_b)) = (a.split_first()?, b.split_first()?);
    if rest_a != rest_b || na == nb && ea != eb || !na.is_multiple_of(ea) || !nb.is_multiple_of(eb)
    {
        return None;
    }
    let per_request = na / ea;
    (per_request > 0 && per_request == nb / eb).then_some(per_request)
}

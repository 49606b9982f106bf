//! Compares one aligned pair of launches: static properties (source, config,
//! grid, layouts) and the hashes of every argument before and after.

use rustc_hash::FxHashMap;
use tritontui_trace::{Access, ArgIndex, ArgRef, Kernel, Launch, Scalar, Trace};

/// What differs between two launches aligned to the same row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PairDiff {
    /// Same kernel name, different source text.
    pub source: bool,
    /// Different launch configuration (num_warps, num_stages, block sizes).
    pub config: bool,
    /// Different grid.
    pub grid: bool,
    /// Tensor arguments whose strides or storage offset differ.
    pub layout: Vec<ArgIndex>,
    /// Arguments the kernel reads whose value before the launch differs.
    pub inputs: Vec<ArgIndex>,
    /// Arguments whose value after the launch differs.
    pub outputs: Vec<ArgIndex>,
    /// Written arguments (declared `inout`, or seen to change) whose bytes
    /// differed before the launch although everything the launch wrote
    /// agrees: the kernel overwrote them before they mattered (Inductor's
    /// scratch `in_out_ptr`s, a user kernel's output).
    pub overwritten: Vec<ArgIndex>,
    /// Some argument the kernel reads was not hashed before the launch.
    pub inputs_unhashed: bool,
    /// Some argument the launch wrote was not hashed after it.
    pub outputs_unhashed: bool,
}

impl PairDiff {
    /// Nothing at all differs.
    pub fn is_empty(&self) -> bool {
        *self == PairDiff::default()
    }

    /// Every output the launch wrote was hashed and agrees bit for bit.
    pub fn outputs_agree(&self) -> bool {
        self.outputs.is_empty() && !self.outputs_unhashed
    }

    /// Something about the launch itself differs (not its data).
    pub fn static_difference(&self) -> bool {
        self.source || self.config || self.grid || !self.layout.is_empty()
    }
}

/// The aten ops that read only their `self` argument's metadata (shape,
/// dtype, device), never its values: a `self` that differs between the
/// runs makes no difference to them.
const METADATA_ONLY: &[&str] = &[
    "empty_like",
    "zeros_like",
    "ones_like",
    "full_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "new_empty",
    "new_empty_strided",
    "new_zeros",
    "new_ones",
    "new_full",
];

/// Whether launches of `kernel` read the values of argument `i` (not so
/// for an output, nor for the `self` of an op that reads only its
/// metadata, `ones_like`, say).
pub fn reads_values(kernel: &Kernel, i: usize) -> bool {
    let metadata_only = || {
        let op = kernel.name.strip_prefix("aten::").unwrap_or_default();
        let base = op.split('.').next().unwrap_or_default();
        METADATA_ONLY.contains(&base) && kernel.arg_name(i) == "self"
    };
    kernel.access_of(i).reads() && !metadata_only()
}

/// Whether two host (non-tensor) arguments are the same value. Identities
/// are not values: traces recorded before host objects were recorded by
/// value (format 1.2) hold reprs such as `<torch._C.Generator object at
/// 0x7f3f...>`, which are compared with their addresses left out.
pub fn same_host_value(x: &Scalar, y: &Scalar) -> bool {
    match (x, y) {
        (Scalar::Str(x), Scalar::Str(y)) => x == y || without_addresses(x) == without_addresses(y),
        _ => x.same_bits(y),
    }
}

/// The text with the digits of every hexadecimal address (`0x` and four
/// or more digits) left out.
fn without_addresses(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("0x") {
        let digits = rest[at + 2..]
            .bytes()
            .take_while(u8::is_ascii_hexdigit)
            .count();
        let kept = if digits >= 4 { at + 2 } else { at + 2 + digits };
        out.push_str(&rest[..kept]);
        rest = &rest[at + 2 + digits..];
    }
    out.push_str(rest);
    out
}

/// Compares aligned launches; caches comparisons of kernel definitions.
pub struct Comparer<'t> {
    a: &'t Trace,
    b: &'t Trace,
    kernels: FxHashMap<(u32, u32), (bool, bool)>,
}

impl<'t> Comparer<'t> {
    /// A comparer for launches of `a` against launches of `b`.
    pub fn new(a: &'t Trace, b: &'t Trace) -> Self {
        Comparer {
            a,
            b,
            kernels: FxHashMap::default(),
        }
    }

    /// (source differs, config differs) for a pair of kernels.
    fn kernel_diff(&mut self, ka: u32, kb: u32) -> (bool, bool) {
        let (a, b) = (self.a, self.b);
        *self.kernels.entry((ka, kb)).or_insert_with(|| {
            let (x, y) = (&a.kernels[ka as usize], &b.kernels[kb as usize]);
            let text = |t: &'t Trace, k: &'t Kernel| t.source_of(k).map(|s| s.text.as_str());
            let source = text(a, x) != text(b, y);
            let config = x.config.len() != y.config.len()
                || x.config
                    .iter()
                    .zip(&y.config)
                    .any(|((kx, vx), (ky, vy))| kx != ky || !vx.same_bits(vy));
            (source, config)
        })
    }

    /// Where an argument has no tthash64 in one run: whether the program's
    /// own hash function gave the same value in both (opaque equality:
    /// the value means nothing else here), or None when it did not run on
    /// it in both, or they are different functions.
    fn same_custom_hash(&self, seq_a: u64, seq_b: u64, arg: usize, when: Moment) -> Option<bool> {
        let (fa, pre_a, post_a) = self.a.custom_hash(seq_a, arg)?;
        let (fb, pre_b, post_b) = self.b.custom_hash(seq_b, arg)?;
        let (x, y) = match when {
            Moment::Before => (pre_a, pre_b),
            Moment::After => (post_a, post_b),
        };
        (fa == fb && *x != Scalar::None && *y != Scalar::None).then(|| x.same_bits(y))
    }

    /// Compares launch `ia` of run A with launch `ib` of run B.
    pub fn compare(&mut self, ia: u32, ib: u32) -> PairDiff {
        let (la, lb): (&Launch, &Launch) =
            (&self.a.launches[ia as usize], &self.b.launches[ib as usize]);
        let (source, config) = self.kernel_diff(la.kernel, lb.kernel);
        let kernel = self.a.kernel_of(la);
        let kernel_b = self.b.kernel_of(lb);
        let mut diff = PairDiff {
            source,
            config,
            grid: la.grid() != lb.grid(),
            ..PairDiff::default()
        };
        // Arguments the recorder saw written in either run.
        let mut written: Vec<ArgIndex> = Vec::new();
        let allocates = kernel.is_allocation();
        for (i, (x, y)) in self.a.args_of(la).zip(self.b.args_of(lb)).enumerate() {
            let index = i as ArgIndex;
            let reads = reads_values(kernel, i);
            match (x, y) {
                (ArgRef::Scalar(x), ArgRef::Scalar(y)) => {
                    if !same_host_value(x, y) {
                        diff.inputs.push(index);
                    }
                }
                (ArgRef::Tensor(tx), ArgRef::Tensor(ty)) => {
                    if tx.layout.stride != ty.layout.stride || tx.layout.offset != ty.layout.offset
                    {
                        diff.layout.push(index);
                    }
                    if reads {
                        match (tx.pre, ty.pre) {
                            (Some(p), Some(q)) if p != q => diff.inputs.push(index),
                            (Some(_), Some(_)) => {}
                            _ => match self.same_custom_hash(la.seq, lb.seq, i, Moment::Before) {
                                Some(false) => diff.inputs.push(index),
                                Some(true) => {}
                                None => diff.inputs_unhashed = true,
                            },
                        }
                    }
                    if tx.written || ty.written {
                        written.push(index);
                    }
                    // Fresh memory is not hashed: nothing to compare after.
                    let fresh = allocates || tx.allocated || ty.allocated;
                    if !fresh && (kernel.wrote(i, &x) || kernel_b.wrote(i, &y)) {
                        match (tx.post, ty.post) {
                            (Some(p), Some(q)) if p != q => diff.outputs.push(index),
                            (Some(_), Some(_)) => {}
                            _ => match self.same_custom_hash(la.seq, lb.seq, i, Moment::After) {
                                Some(false) => diff.outputs.push(index),
                                Some(true) => {}
                                None => diff.outputs_unhashed = true,
                            },
                        }
                    }
                }
                // Alignment keys include argument kinds, so this only happens
                // for launches compared outside an alignment.
                _ => diff.layout.push(index),
            }
        }
        if diff.outputs.is_empty() && !diff.outputs_unhashed {
            // An in/out argument whose old bytes differ while everything the
            // launch wrote agrees was overwritten before they mattered: an
            // aten op's `self` it fills (`bernoulli_` on fresh memory), a
            // buffer whose first use the recorder took for a read.
            let (overwritten, inputs) = diff.inputs.iter().partition(|&&i| {
                kernel.access_of(usize::from(i)) == Access::Inout || written.contains(&i)
            });
            diff.overwritten = overwritten;
            diff.inputs = inputs;
        }
        diff
    }
}

/// Before a launch or after it.
#[derive(Debug, Clone, Copy)]
enum Moment {
    Before,
    After,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_values_are_compared_without_addresses() {
        let text = |s: &str| Scalar::Str(s.to_owned());
        let a = text("<torch._C.Generator object at 0x7f3f12ab>");
        let b = text("<torch._C.Generator object at 0x7f95cd01>");
        assert!(same_host_value(&a, &b));
        assert!(!same_host_value(
            &a,
            &text("<torch._C.Stream object at 0x7f3f12ab>")
        ));
        assert!(same_host_value(&text("0x1234beef"), &text("0xabcd")));
        assert!(
            !same_host_value(&text("sum"), &text("mean")),
            "plain strings are data"
        );
        assert!(
            !same_host_value(&text("0x12"), &text("0x13")),
            "short hex is data"
        );
        assert!(!same_host_value(&Scalar::Int(1), &Scalar::Int(2)));
    }
}

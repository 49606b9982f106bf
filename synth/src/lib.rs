//! Synthetic trace pairs for tests and benchmarks (a crate of its own,
//! not part of the shipped app; `tritontui-synth` is its command line).
//!
//! A small simulated program runs twice: a cycle of Inductor-like kernels
//! that read earlier outputs, weights (graph inputs) and an accumulator,
//! and write new values. Every buffer holds a content hash; a launch's
//! output hash is a function of its inputs, so a fault injected into run B
//! propagates downstream exactly as a real one would. Each injection comes
//! back with the divergence the engine must report for it.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use tritontui_engine::analysis::Kind;
use tritontui_trace::{
    Access, ArgDef, ArgValue, CallRecord, Distributed, GraphDef, Header, KernelDef, LaunchRecord,
    Record, Scalar, TraceWriter, format::RecordOptions,
};

pub mod cli;
pub mod hand;
mod ranks;
pub use ranks::{RankSpec, generate_ranks};

/// A fault to put into run B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Injection {
    /// Launch `at` writes a different value with equal inputs.
    Nondeterministic { at: usize },
    /// Launch `at` runs with another config (num_warps) and writes a different value.
    LaunchConfig { at: usize },
    /// Launch `at` runs changed source code and writes a different value.
    Code { at: usize },
    /// Just before launch `at`, its first input is overwritten outside the
    /// recorded region.
    Input { at: usize },
    /// The weight read by kernel `kernel` (a graph input) differs from the start.
    Weight { kernel: usize },
    /// Launch `at` reads a buffer no launch wrote, holding different garbage
    /// in each run.
    Uninitialized { at: usize },
    /// `count` extra launches are made just before launch `at`.
    Insert { at: usize, count: usize },
    /// Launch `at` writes an output of a different shape.
    Shape { at: usize },
}

impl Injection {
    /// The program launch (index in run A) the injection acts at.
    fn launch(self) -> usize {
        match self {
            Injection::Nondeterministic { at }
            | Injection::LaunchConfig { at }
            | Injection::Code { at }
            | Injection::Input { at }
            | Injection::Uninitialized { at }
            | Injection::Insert { at, .. }
            | Injection::Shape { at } => at,
            // A weight is first read by the first launch of its kernel.
            Injection::Weight { kernel } => kernel,
        }
    }
}

impl std::str::FromStr for Injection {
    type Err = String;

    /// Parses `nondet@N`, `config@N`, `code@N`, `input@N`, `weight@K`,
    /// `uninit@N`, `insert@N` or `insert@NxCOUNT`, and `shape@N`.
    fn from_str(s: &str) -> Result<Self, String> {
        let (kind, at) = s
            .split_once('@')
            .ok_or_else(|| format!("{s:?}: expected KIND@LAUNCH, e.g. nondet@500"))?;
        let number = |t: &str| {
            t.parse::<usize>()
                .map_err(|_| format!("{s:?}: {t:?} is not a launch number"))
        };
        Ok(match kind {
            "nondet" => Injection::Nondeterministic { at: number(at)? },
            "config" => Injection::LaunchConfig { at: number(at)? },
            "code" => Injection::Code { at: number(at)? },
            "input" => Injection::Input { at: number(at)? },
            "weight" => Injection::Weight {
                kernel: number(at)?,
            },
            "uninit" => Injection::Uninitialized { at: number(at)? },
            "shape" => Injection::Shape { at: number(at)? },
            "insert" => {
                let (at, count) = at.split_once('x').unwrap_or((at, "1"));
                Injection::Insert {
                    at: number(at)?,
                    count: number(count)?,
                }
            }
            other => {
                return Err(format!(
                    "{s:?}: unknown kind {other:?} (nondet, config, code, input, weight, uninit, insert, shape)"
                ));
            }
        })
    }
}

/// What to generate.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Program launches in run A.
    pub launches: usize,
    /// Faults in run B.
    pub injections: Vec<Injection>,
    /// Add autotuning launches (with different hashes in each run) before
    /// the first launch; the engine must ignore them.
    pub autotune: bool,
}

/// The divergence the engine must report for one injection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// The injection.
    pub injection: Injection,
    /// Its classification.
    pub kind: Kind,
    /// Sequence number in A of the launch it shows at, if A has it.
    pub a_seq: Option<u64>,
    /// Sequence number in B, if B has it.
    pub b_seq: Option<u64>,
    /// Kernel name at that launch.
    pub kernel: String,
}

/// `count` single-launch insertions spread evenly over `launches` launches.
pub fn spread_inserts(launches: usize, count: usize) -> Vec<Injection> {
    let Some(step) = launches.checked_div(count) else {
        return Vec::new();
    };
    let step = step.max(1);
    (0..count)
        .map(|i| Injection::Insert {
            at: (i * step + step / 2).min(launches.saturating_sub(1)),
            count: 1,
        })
        .collect()
}

/// Kernels in one simulated step, in launch order: name, template.
const KERNELS: [(&str, Template); 12] = [
    ("triton_poi_fused_embedding_0", Template::Pointwise),
    ("triton_red_fused_native_layer_norm_1", Template::Reduction),
    ("triton_poi_fused_mul_2", Template::Pointwise),
    ("triton_per_fused__softmax_3", Template::Reduction),
    ("triton_poi_fused_gelu_4", Template::Pointwise),
    ("triton_poi_fused_index_add_5", Template::Scatter),
    ("triton_red_fused_sum_6", Template::Reduction),
    ("triton_poi_fused_add_7", Template::Pointwise),
    (
        "triton_per_fused_native_layer_norm_backward_8",
        Template::Reduction,
    ),
    ("triton_poi_fused_threshold_backward_9", Template::Pointwise),
    ("triton_red_fused_mean_10", Template::Reduction),
    ("triton_poi_fused__to_copy_11", Template::Pointwise),
];

/// Name of the kernel of the launches `Injection::Insert` adds.
const EXTRA_KERNEL: &str = "triton_poi_fused_clone_12";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Template {
    Pointwise,
    Reduction,
    Scatter,
}

/// Buffers of the simulated program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Buffer {
    Weight(usize),
    Input,
    Output(usize),
    Accumulator(usize),
    Scratch,
    Garbage,
}

impl Buffer {
    fn address(self) -> u64 {
        let slot = match self {
            Buffer::Input => 0,
            Buffer::Scratch => 1,
            Buffer::Garbage => 2,
            Buffer::Accumulator(i) => 3 + i as u64,
            Buffer::Weight(j) => 16 + j as u64,
            Buffer::Output(j) => 64 + j as u64,
        };
        0x7f3a_0000_0000 + slot * 0x0400_0000
    }
}

const ACTIVATION: [u64; 3] = [8, 512, 1024];
const WIDE: [u64; 3] = [8, 512, 2048];
const WEIGHT: [u64; 2] = [1024, 1024];

fn contiguous(shape: &[u64]) -> Vec<i64> {
    let mut stride = vec![1i64; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        stride[i] = stride[i + 1] * shape[i + 1] as i64;
    }
    stride
}

/// A 64-bit mixer (SplitMix64's finalizer); simulated contents are hashes.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Which kernel definition a launch uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Variant {
    Base,
    OtherConfig,
    OtherCode,
}

/// Writes run A to `a` and run B to `b`, and returns what the engine must
/// find for each injection.
pub fn generate(spec: &Spec, a: impl Write, b: impl Write) -> io::Result<Vec<Expected>> {
    Simulator::new(spec, false, None, a)?.run()?;
    Simulator::new(spec, true, None, b)?.run()
}

struct Simulator<'s, W: Write> {
    spec: &'s Spec,
    is_b: bool,
    writer: TraceWriter<W>,
    content: HashMap<Buffer, u64>,
    kernels: HashMap<(usize, Variant), u64>,
    layouts: HashMap<Vec<u64>, u64>,
    /// Injections by the launch they act at.
    at_launch: HashMap<usize, Vec<Injection>>,
    seq: u64,
    /// Launches run B inserted so far.
    inserted: u64,
    /// The kernel id of the all-reduce, once defined (`ranks`).
    all_reduce_kernel: Option<u64>,
    /// Mixed into the program's input: each rank reads its own.
    input_salt: u64,
    expected: Vec<Expected>,
}

impl<'s, W: Write> Simulator<'s, W> {
    /// The simulated program of `spec` (run B's when `is_b`), as rank
    /// `place` of a multi-rank run when given, writing its trace to `out`.
    fn new(spec: &'s Spec, is_b: bool, place: Option<Distributed>, out: W) -> io::Result<Self> {
        let mut header = Header::new(concat!("tritontui synth ", env!("CARGO_PKG_VERSION")));
        let input_salt = place.as_ref().map_or(0, |p| u64::from(p.rank) << 40);
        header.distributed = place;
        header.host = "synthetic".into();
        header.pid = if is_b { 2 } else { 1 };
        header.argv = vec!["tritontui".into(), "synth".into()];
        header.devices = vec!["simulated GPU".into()];
        header.options = RecordOptions {
            hash: "simulated".into(),
            hash_inputs: true,
            hash_outputs: true,
            ..RecordOptions::default()
        };
        Ok(Simulator {
            spec,
            is_b,
            writer: TraceWriter::new(out, &header)?,
            content: HashMap::new(),
            kernels: HashMap::new(),
            layouts: HashMap::new(),
            at_launch: spec.injections.iter().fold(HashMap::new(), |mut map, &i| {
                map.entry(i.launch()).or_insert_with(Vec::new).push(i);
                map
            }),
            seq: 0,
            inserted: 0,
            all_reduce_kernel: None,
            input_salt,
            expected: Vec::new(),
        })
    }

    fn read(&self, buffer: Buffer) -> u64 {
        self.content.get(&buffer).copied().unwrap_or(0)
    }

    fn run(mut self) -> io::Result<Vec<Expected>> {
        self.graph_inputs()?;
        for n in 0..self.spec.launches {
            self.step(n)?;
        }
        self.finish()
    }

    /// Program launch `n`, with what is injected at it.
    fn step(&mut self, n: usize) -> io::Result<()> {
        let here = self.at_launch.get(&n).cloned().unwrap_or_default();
        if n == 0 && self.spec.autotune {
            for _ in 0..2 {
                self.launch(n, &here, true)?;
            }
        }
        for &injection in &here {
            if let Injection::Insert { count, .. } = injection
                && self.is_b
            {
                let first = self.seq;
                for _ in 0..count {
                    self.extra_launch()?;
                }
                self.inserted += count as u64;
                self.expect(injection, Kind::Structural, None, Some(first), EXTRA_KERNEL);
            }
        }
        let a_seq = self.seq - self.inserted;
        self.before_launch(n, &here, a_seq);
        self.launch(n, &here, false)
    }

    fn finish(self) -> io::Result<Vec<Expected>> {
        self.writer.finish(self.seq * 7_000, "exit")?;
        Ok(self.expected)
    }

    fn expect(
        &mut self,
        injection: Injection,
        kind: Kind,
        a_seq: Option<u64>,
        b_seq: Option<u64>,
        kernel: &str,
    ) {
        self.expected.push(Expected {
            injection,
            kind,
            a_seq,
            b_seq,
            kernel: kernel.to_owned(),
        });
    }

    fn layout(&mut self, shape: &[u64]) -> io::Result<u64> {
        if let Some(&id) = self.layouts.get(shape) {
            return Ok(id);
        }
        let id = self
            .writer
            .layout("float32", 4, shape, &contiguous(shape), 0)?;
        self.layouts.insert(shape.to_vec(), id);
        Ok(id)
    }

    fn graph_inputs(&mut self) -> io::Result<()> {
        let mut inputs = vec![(Buffer::Input, ACTIVATION.to_vec())];
        inputs.extend((0..KERNELS.len()).map(|j| (Buffer::Weight(j), WEIGHT.to_vec())));
        self.writer.write(&Record::Graph(GraphDef {
            id: 0,
            key: "graph_0".into(),
            inputs: (1..=inputs.len()).map(|i| format!("primals_{i}")).collect(),
        }))?;
        let mut args = Vec::with_capacity(inputs.len());
        for (buffer, shape) in inputs {
            let salt = if buffer == Buffer::Input {
                self.input_salt
            } else {
                0
            };
            let mut value = mix(buffer.address() ^ salt);
            if let Buffer::Weight(j) = buffer
                && self.is_b
                && self
                    .spec
                    .injections
                    .contains(&Injection::Weight { kernel: j })
            {
                value = mix(value);
            }
            self.content.insert(buffer, value);
            let layout = self.layout(&shape)?;
            args.push(ArgValue::tensor(
                layout,
                buffer.address(),
                0,
                Some(value),
                Some(value),
            ));
        }
        self.writer.write(&Record::Call(CallRecord {
            graph: 0,
            before: 0,
            device: 0,
            first: 0,
            args,
        }))?;
        // Each run leaves different garbage in memory nobody initialised.
        self.content
            .insert(Buffer::Garbage, if self.is_b { 2 } else { 1 });
        Ok(())
    }

    /// Injections that act between launches, and the expectations they set.
    fn before_launch(&mut self, n: usize, here: &[Injection], a_seq: u64) {
        if !self.is_b {
            return;
        }
        let b_seq = Some(self.seq);
        let name = KERNELS[n % KERNELS.len()].0;
        for &injection in here {
            let kind = match injection {
                Injection::Nondeterministic { .. } => Kind::NondeterministicKernel,
                Injection::LaunchConfig { .. } => Kind::LaunchConfig,
                Injection::Code { .. } => Kind::Code,
                Injection::Input { .. }
                | Injection::Uninitialized { .. }
                | Injection::Weight { .. } => Kind::DivergentInput,
                Injection::Shape { .. } => Kind::Structural,
                Injection::Insert { .. } => continue,
            };
            if let Injection::Input { .. } = injection {
                let victim = inputs_of(n)[0];
                let changed = mix(self.read(victim) ^ 0xdead);
                self.content.insert(victim, changed);
            }
            self.expect(injection, kind, Some(a_seq), b_seq, name);
        }
    }

    fn kernel(&mut self, j: usize, variant: Variant) -> io::Result<u64> {
        if let Some(&id) = self.kernels.get(&(j, variant)) {
            return Ok(id);
        }
        let (name, template) = if j < KERNELS.len() {
            KERNELS[j]
        } else {
            (EXTRA_KERNEL, Template::Pointwise)
        };
        let mut text = kernel_source(name, template);
        if variant == Variant::OtherCode {
            text = text.replace("tmp0 + tmp1", "tmp1 + tmp0");
        }
        let source = self.writer.add_source(
            &format!("/tmp/torchinductor_user/{}/{name}.py", &name[7..9]),
            "python",
            &text,
        )?;
        let arg = |name: &str, access| ArgDef {
            name: name.into(),
            ty: if name.ends_with("numel") {
                "i32".into()
            } else {
                "*fp32".into()
            },
            access,
        };
        let args = vec![
            arg("in_ptr0", Access::In),
            arg("in_ptr1", Access::In),
            arg("in_ptr2", Access::In),
            arg("in_ptr3", Access::In),
            arg("out_ptr0", Access::Out),
            arg("in_out_ptr0", Access::Inout),
            arg("xnumel", Access::In),
        ];
        let num_warps = if variant == Variant::OtherConfig {
            8
        } else {
            4
        };
        let config = BTreeMap::from([
            ("XBLOCK".to_owned(), Scalar::Int(1024)),
            ("num_warps".to_owned(), Scalar::Int(num_warps)),
            ("num_stages".to_owned(), Scalar::Int(1)),
        ]);
        let meta = BTreeMap::from([
            (
                "atomic_add_found".to_owned(),
                Scalar::Bool(template == Template::Scatter),
            ),
            (
                "are_deterministic_algorithms_enabled".to_owned(),
                Scalar::Bool(false),
            ),
        ]);
        let id = self.writer.add_kernel(KernelDef {
            id: 0,
            name: name.into(),
            backend: "triton".into(),
            args,
            source: Some(source),
            meta,
            config,
        })?;
        self.kernels.insert((j, variant), id);
        Ok(id)
    }

    fn extra_launch(&mut self) -> io::Result<()> {
        let kernel = self.kernel(KERNELS.len(), Variant::Base)?;
        let activation = self.layout(&ACTIVATION)?;
        let x = self.read(Buffer::Input);
        let out = mix(x ^ self.seq);
        self.content.insert(Buffer::Scratch, out);
        let args = vec![
            ArgValue::tensor(activation, Buffer::Input.address(), 0, Some(x), Some(x)),
            ArgValue::tensor(activation, Buffer::Input.address(), 0, Some(x), Some(x)),
            ArgValue::tensor(activation, Buffer::Input.address(), 0, Some(x), Some(x)),
            ArgValue::tensor(activation, Buffer::Input.address(), 0, Some(x), Some(x)),
            ArgValue::tensor(activation, Buffer::Scratch.address(), 1, Some(0), Some(out)),
            ArgValue::tensor(
                activation,
                Buffer::Scratch.address(),
                1,
                Some(out),
                Some(out),
            ),
            ArgValue::Scalar(Scalar::Int(4_194_304)),
        ];
        self.emit(kernel, false, args)
    }

    fn launch(&mut self, n: usize, here: &[Injection], autotune: bool) -> io::Result<()> {
        let j = n % KERNELS.len();
        let in_b = |wanted: Injection| self.is_b && here.contains(&wanted);
        let variant = if in_b(Injection::LaunchConfig { at: n }) {
            Variant::OtherConfig
        } else if in_b(Injection::Code { at: n }) {
            Variant::OtherCode
        } else {
            Variant::Base
        };
        let salted = variant != Variant::Base
            || in_b(Injection::Nondeterministic { at: n })
            || in_b(Injection::Shape { at: n });
        let wide = in_b(Injection::Shape { at: n });
        let kernel = self.kernel(j, variant)?;
        let mut reads = inputs_of(n).to_vec();
        if here.contains(&Injection::Uninitialized { at: n }) {
            reads[3] = Buffer::Garbage;
        }
        let (out, acc) = (Buffer::Output(j), Buffer::Accumulator(j % 4));
        let pre: Vec<u64> = reads.iter().map(|&b| self.read(b)).collect();
        let (out_pre, acc_pre) = (self.read(out), self.read(acc));
        let mut value = mix(pre.iter().fold(j as u64, |h, &x| mix(h ^ x)) ^ acc_pre);
        if salted {
            value = mix(value ^ 0x5eed);
        }
        if autotune {
            // Benchmarking launches write into scratch copies; their values
            // differ from run to run and must not matter.
            value = mix(value ^ self.seq ^ u64::from(self.is_b));
        } else {
            self.content.insert(out, value);
            self.content.insert(acc, mix(acc_pre ^ value));
        }
        let out_shape: &[u64] = if wide { &WIDE } else { &ACTIVATION };
        let activation = self.layout(&ACTIVATION)?;
        let weight = self.layout(&WEIGHT)?;
        let out_layout = self.layout(out_shape)?;
        let acc_post = if autotune { acc_pre } else { self.read(acc) };
        let mut args: Vec<ArgValue> = reads
            .iter()
            .zip(&pre)
            .map(|(&buffer, &h)| {
                let layout = if matches!(buffer, Buffer::Weight(_)) {
                    weight
                } else {
                    activation
                };
                ArgValue::tensor(layout, buffer.address(), 0, Some(h), Some(h))
            })
            .collect();
        args.push(ArgValue::tensor(
            out_layout,
            out.address(),
            1,
            Some(out_pre),
            Some(value),
        ));
        args.push(ArgValue::tensor(
            activation,
            acc.address(),
            1,
            Some(acc_pre),
            Some(acc_post),
        ));
        args.push(ArgValue::Scalar(Scalar::Int(4_194_304)));
        self.emit(kernel, autotune, args)
    }

    fn emit(&mut self, kernel: u64, autotune: bool, args: Vec<ArgValue>) -> io::Result<()> {
        let launch = LaunchRecord {
            seq: self.seq,
            kernel,
            grid: vec![4096, 1, 1],
            stream: 0x5581_2345_6780,
            device: 0,
            thread: 4242,
            ts: self.seq * 7_000,
            autotune,
            captured: None,
            module: None,
            args,
        };
        self.seq += 1;
        self.writer.launch(&launch)
    }
}

/// What launch `n` reads: the two previous outputs, its weight, the input.
fn inputs_of(n: usize) -> [Buffer; 4] {
    let k = KERNELS.len();
    let j = n % k;
    [
        Buffer::Output((j + k - 1) % k),
        Buffer::Output((j + k - 2) % k),
        Buffer::Weight(j),
        Buffer::Input,
    ]
}

/// Inductor-style Triton source for a simulated kernel.
fn kernel_source(name: &str, template: Template) -> String {
    let heuristic = match template {
        Template::Pointwise | Template::Scatter => "pointwise",
        Template::Reduction => "reduction",
    };
    let body = match template {
        Template::Pointwise => {
            "    tmp0 = tl.load(in_ptr0 + (x0), None)
    tmp1 = tl.load(in_ptr1 + (x0), None)
    tmp2 = tl.load(in_ptr2 + (x0 % 1048576), None, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr3 + (x0), None)
    tmp4 = tmp0 + tmp1
    tmp5 = tmp4 * tmp2
    tmp6 = tmp5 + tmp3
    tl.store(out_ptr0 + (x0), tmp6, None)
    tmp7 = tl.load(in_out_ptr0 + (x0), None)
    tl.store(in_out_ptr0 + (x0), tmp7 + tmp6, None)
"
        }
        Template::Reduction => {
            "    tmp0 = tl.load(in_ptr0 + (x0), None)
    tmp1 = tl.load(in_ptr1 + (x0), None)
    tmp2 = tl.load(in_ptr2 + (x0 % 1048576), None, eviction_policy='evict_last')
    tmp3 = tmp0 + tmp1
    tmp4 = tl.broadcast_to(tmp3 * tmp2, [XBLOCK])
    tmp5 = triton_helpers.promote_to_tensor(tl.sum(tmp4, 0))
    tmp6 = tl.load(in_ptr3 + (x0), None)
    tl.store(out_ptr0 + (x0), tmp6 * tmp5, None)
    tmp7 = tl.load(in_out_ptr0 + (x0), None)
    tl.store(in_out_ptr0 + (x0), tmp7 + tmp5, None)
"
        }
        Template::Scatter => {
            "    tmp0 = tl.load(in_ptr0 + (x0), None)
    tmp1 = tl.load(in_ptr1 + (x0), None)
    tmp2 = tl.load(in_ptr2 + (x0 % 1048576), None, eviction_policy='evict_last')
    tmp3 = tl.load(in_ptr3 + (x0), None).to(tl.int64)
    tmp4 = tmp0 + tmp1
    tmp5 = (tmp3 % 4096) * 1024 + (x0 % 1024)
    tl.atomic_add(out_ptr0 + (tmp5), tmp4 * tmp2, None, sem='relaxed')
    tmp7 = tl.load(in_out_ptr0 + (x0), None)
    tl.store(in_out_ptr0 + (x0), tmp7 + tmp4, None)
"
        }
    };
    format!(
        "import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.{heuristic}(
    size_hints={{'x': 4194304}},
    filename=__file__,
    triton_meta={{'signature': {{'in_ptr0': '*fp32', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'in_ptr3': '*fp32', 'out_ptr0': '*fp32', 'in_out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, warp_size=32), 'constants': {{}}}},
    inductor_meta={{'kernel_name': '{name}', 'mutated_arg_names': ['in_out_ptr0'], 'atomic_add_found': {atomic}}},
    min_elem_per_thread=0
)
@triton.jit
def {name}(in_ptr0, in_ptr1, in_ptr2, in_ptr3, out_ptr0, in_out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xnumel = 4194304
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    x0 = xindex
{body}",
        atomic = if template == Template::Scatter { "True" } else { "False" },
    )
}

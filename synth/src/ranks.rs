//! Synthetic multi-rank runs (`synth --ranks N`): the simulated program on
//! every rank of a data-parallel run, the ranks in lockstep. Each rank
//! reads its own input and the same weights, and after every step the
//! ranks all-reduce their first accumulator (`c10d::allreduce_` on the
//! default group), so that a fault on one rank reaches every other rank
//! through the collective, as a real one does.

use super::{Buffer, Expected, KERNELS, Simulator, Spec, mix};
use std::io::{self, Write};
use tritontui_trace::{Access, ArgDef, ArgValue, Distributed, KernelDef, Scalar};

/// The ranks of a synthetic run and where run B's faults go.
#[derive(Debug, Clone)]
pub struct RankSpec {
    /// Number of ranks.
    pub ranks: u32,
    /// The rank the spec's injections act on in run B.
    pub fault_rank: u32,
    /// In run B, the fault rank's all-reduce number K (from 0) leaves
    /// other bytes than the other ranks' (silent data corruption).
    pub corrupt_collective: Option<u64>,
}

/// Writes run A's and run B's rank traces (to what `create(is_b, rank)`
/// opens), and returns what the engine must find on the fault rank for
/// each injection.
pub fn generate_ranks<W: Write>(
    spec: &Spec,
    ranks: &RankSpec,
    mut create: impl FnMut(bool, u32) -> io::Result<W>,
) -> io::Result<Vec<Expected>> {
    run(spec, ranks, false, &mut create)?;
    run(spec, ranks, true, &mut create)
}

fn run<W: Write>(
    spec: &Spec,
    ranks: &RankSpec,
    is_b: bool,
    create: &mut impl FnMut(bool, u32) -> io::Result<W>,
) -> io::Result<Vec<Expected>> {
    let quiet = Spec {
        injections: Vec::new(),
        ..spec.clone()
    };
    let members = (0..ranks.ranks)
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let group = format!("<ProcessGroup name=0 backend=nccl ranks={members}>");
    let mut simulators = Vec::with_capacity(ranks.ranks as usize);
    for rank in 0..ranks.ranks {
        let faulty = is_b && rank == ranks.fault_rank;
        let place = Distributed {
            rank,
            world_size: ranks.ranks,
            local_rank: rank % 8,
            local_world_size: 8.min(ranks.ranks),
            node_rank: rank / 8,
            run_id: if is_b { "synthetic-b" } else { "synthetic-a" }.into(),
        };
        let own = if faulty { spec } else { &quiet };
        let mut simulator = Simulator::new(own, is_b, Some(place), create(is_b, rank)?)?;
        simulator.graph_inputs()?;
        simulators.push(simulator);
    }
    let mut collective = 0u64;
    for n in 0..spec.launches {
        for simulator in &mut simulators {
            simulator.step(n)?;
        }
        if (n + 1) % KERNELS.len() == 0 {
            let reduced = simulators
                .iter()
                .fold(0, |h, s| mix(h ^ s.read(Buffer::Accumulator(0))));
            for (rank, simulator) in (0..).zip(&mut simulators) {
                let corrupt = is_b
                    && rank == ranks.fault_rank
                    && ranks.corrupt_collective == Some(collective);
                let value = if corrupt {
                    mix(reduced ^ 0xbad)
                } else {
                    reduced
                };
                simulator.all_reduce(value, &group)?;
            }
            collective += 1;
        }
    }
    let mut expected = Vec::new();
    for (rank, simulator) in (0..).zip(simulators) {
        let found = simulator.finish()?;
        if rank == ranks.fault_rank {
            expected = found;
        }
    }
    Ok(expected)
}

impl<W: Write> Simulator<'_, W> {
    /// An all-reduce of the first accumulator on process group `group`
    /// that leaves `value` in it.
    fn all_reduce(&mut self, value: u64, group: &str) -> io::Result<()> {
        let kernel = match self.all_reduce_kernel {
            Some(id) => id,
            None => {
                let arg = |name: &str, access| ArgDef {
                    name: name.into(),
                    ty: String::new(),
                    access,
                };
                let id = self.writer.add_kernel(KernelDef {
                    id: 0,
                    name: "c10d::allreduce_".into(),
                    backend: "aten".into(),
                    args: vec![
                        arg("tensors[0]", Access::Inout),
                        arg("process_group", Access::In),
                        arg("reduce_op", Access::In),
                    ],
                    source: None,
                    meta: Default::default(),
                    config: Default::default(),
                })?;
                self.all_reduce_kernel = Some(id);
                id
            }
        };
        let accumulator = Buffer::Accumulator(0);
        let before = self.read(accumulator);
        self.content.insert(accumulator, value);
        let layout = self.layout(&super::ACTIVATION)?;
        let args = vec![
            ArgValue::tensor(layout, accumulator.address(), 1, Some(before), Some(value)),
            ArgValue::Scalar(Scalar::Str(group.to_owned())),
            ArgValue::Scalar(Scalar::Str("<ReduceOp SUM>".into())),
        ];
        self.emit(kernel, false, args)
    }
}

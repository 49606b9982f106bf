//! A rank trace read down to its collectives, compactly: what each call
//! ran (interned per rank: a run repeats the same few collectives) and
//! what it left, so that many ranks fit in memory at once.

use rustc_hash::FxHashMap;
use std::path::Path;
use tritontui_trace::hash::fmix64;
use tritontui_trace::{Access, ArgRef, Scalar, Trace};

/// A process group as a collective's arguments name it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Group {
    /// Its name; `?` when the trace does not say (before format 1.7).
    pub name: String,
    /// Its backend, when the trace says.
    pub backend: Option<String>,
    /// Its members' global ranks, when the trace says.
    pub members: Option<Vec<u32>>,
}

/// What a collective call ran: the same on every member of its group.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Kind {
    /// The op (`c10d::allreduce_`).
    pub op: String,
    /// Its reduce op, upper case (`SUM`), if it has one.
    pub reduce_op: Option<String>,
    /// Its root rank (broadcast, reduce, gather, scatter).
    pub root: Option<i64>,
    /// Dtype and shape of each tensor argument, in order.
    pub shapes: String,
}

/// What the members of a group should agree on for an op, beyond running
/// it in the same order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agreement {
    /// Same shapes, and the same result on every member.
    Results,
    /// Same shapes; results differ by design (reduce-scatter, reduce).
    Shapes,
    /// Shapes may differ by design too (all-to-all, gather, scatter).
    Order,
}

/// What a call left in the tensors that hold its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Its members' results differ by design.
    NotShared,
    /// Some result tensor was not hashed after it.
    Unhashed,
    /// The hash of its result tensor, or of its result tensors' hashes in
    /// order when there are several.
    Hash(u64),
}

/// One collective call.
#[derive(Debug, Clone, Copy)]
pub struct Call {
    /// Its launch `seq`.
    pub seq: u64,
    /// When it ran: ns since the Unix epoch, by the rank's clock.
    pub at_ns: u64,
    /// Its group, in [`RankCollectives::groups`].
    pub group: u32,
    /// What it ran, in [`RankCollectives::kinds`].
    pub kind: u32,
    /// What it left.
    pub outcome: Outcome,
}

/// Which end of a point-to-point transfer a call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// `c10d::send`.
    Send,
    /// `c10d::recv_`, `c10d::recv_any_source_`.
    Receive,
}

/// One end of a point-to-point transfer.
#[derive(Debug, Clone, Copy)]
pub struct Message {
    /// Its launch `seq`.
    pub seq: u64,
    /// When it ran: ns since the Unix epoch, by the rank's clock.
    pub at_ns: u64,
    /// Its group, in [`RankCollectives::groups`].
    pub group: u32,
    /// What it ran (op and shapes), in [`RankCollectives::kinds`].
    pub kind: u32,
    /// Which end it is.
    pub end: End,
    /// The other end's rank in the group (`dst` of a send, `src` of a
    /// receive); None when the trace does not say.
    pub peer: Option<i64>,
    /// Its tag.
    pub tag: i64,
    /// The hash of its tensors (folded in order when several): what a
    /// send read, what a receive holds once complete.
    pub outcome: Outcome,
}

/// One rank's collectives.
#[derive(Debug, Default)]
pub struct RankCollectives {
    /// The world size its header names.
    pub world_size: Option<u32>,
    /// The groups its calls ran on.
    pub groups: Vec<Group>,
    /// What its calls ran.
    pub kinds: Vec<Kind>,
    /// Its calls, in order.
    pub calls: Vec<Call>,
    /// Its sends and receives, in order.
    pub messages: Vec<Message>,
    /// The pieces of its all-gathers and all-to-alls of tensor lists, by
    /// launch `seq`.
    pub pieces: FxHashMap<u64, Pieces>,
    kind_ids: FxHashMap<Kind, u32>,
}

impl RankCollectives {
    /// Reads the collectives of the trace at `path`.
    pub fn read(path: &Path) -> anyhow::Result<RankCollectives> {
        let trace = Trace::open(path)?;
        let mut rank = RankCollectives {
            world_size: trace.header.distributed.as_ref().map(|d| d.world_size),
            ..RankCollectives::default()
        };
        for (_, launch) in trace.program_launches() {
            let kernel = trace.kernel_of(launch);
            if let Some(end) = end_of(&kernel.name) {
                rank.read_message(&trace, launch, end);
                continue;
            }
            let Some(agreement) = agreement(&kernel.name) else {
                continue;
            };
            let mut group = Group::default();
            let mut kind = Kind {
                op: kernel.name.clone(),
                ..Kind::default()
            };
            let mut shapes = Vec::new();
            let mut results = Vec::new();
            let mut pieces = is_list_collective(&kernel.name).then(Pieces::default);
            for (i, arg) in trace.args_of(launch).enumerate() {
                let def = kernel.args.get(i);
                let name = def.map_or("", |d| d.name.as_str());
                match arg {
                    ArgRef::Scalar(value) => read_scalar(name, value, &mut group, &mut kind),
                    ArgRef::Tensor(t) => {
                        shapes.push(format!("{}{:?}", t.layout.dtype, t.layout.shape));
                        let access = def.map_or(Access::In, |d| d.access);
                        if agreement == Agreement::Results && holds_result(name, access) {
                            results.push(t.post);
                        }
                        if let Some(pieces) = pieces.as_mut() {
                            if name.starts_with("input_tensors[") {
                                pieces.ins.push(t.pre.or(t.post));
                            } else if name.starts_with("output_tensors[") {
                                pieces.outs.push(t.post);
                            }
                        }
                    }
                }
            }
            kind.shapes = shapes.join(" ");
            if group.name.is_empty() {
                group.name = "?".into();
            }
            let outcome = outcome(&results);
            if let Some(pieces) = pieces {
                rank.pieces.insert(launch.seq, pieces);
            }
            rank.push(
                launch.seq,
                trace.header.created_ns + launch.ts,
                group,
                kind,
                outcome,
            );
        }
        // The groups made (format 1.8): what a collective naming its group
        // by name alone leaves out, and the groups no collective used.
        for made in &trace.process_groups {
            let backend = Some(made.backend.clone()).filter(|b| !b.is_empty());
            let mut named = false;
            for group in rank.groups.iter_mut().filter(|g| g.name == made.name) {
                named = true;
                if group.backend.is_none() {
                    group.backend.clone_from(&backend);
                }
                group.members.get_or_insert_with(|| made.ranks.clone());
            }
            if !named {
                rank.groups.push(Group {
                    name: made.name.clone(),
                    backend,
                    members: Some(made.ranks.clone()),
                });
            }
        }
        Ok(rank)
    }

    /// Reads a send or a receive.
    fn read_message(&mut self, trace: &Trace, launch: &tritontui_trace::Launch, end: End) {
        let kernel = trace.kernel_of(launch);
        let mut group = Group::default();
        let (mut peer, mut tag) = (None, 0);
        let mut shapes = Vec::new();
        let mut hashes = Vec::new();
        for (i, arg) in trace.args_of(launch).enumerate() {
            let name = kernel.args.get(i).map_or("", |d| d.name.as_str());
            match (name, arg) {
                ("process_group", ArgRef::Scalar(Scalar::Str(text))) => {
                    if let Some(named) = parse_process_group(text) {
                        group = named;
                    }
                }
                ("dst" | "src", ArgRef::Scalar(Scalar::Int(rank))) => peer = Some(*rank),
                ("tag", ArgRef::Scalar(Scalar::Int(value))) => tag = *value,
                (_, ArgRef::Tensor(t)) => {
                    shapes.push(format!("{}{:?}", t.layout.dtype, t.layout.shape));
                    // What a send read: its bytes before, or after where
                    // the hash before was inherited (they are the same).
                    hashes.push(match end {
                        End::Send => t.pre.or(t.post),
                        End::Receive => t.post,
                    });
                }
                _ => {}
            }
        }
        if group.name.is_empty() {
            group.name = "?".into();
        }
        let kind = Kind {
            op: kernel.name.clone(),
            shapes: shapes.join(" "),
            ..Kind::default()
        };
        let message = Message {
            seq: launch.seq,
            at_ns: trace.header.created_ns + launch.ts,
            group: self.group_id(group),
            kind: self.kind_id(kind),
            end,
            peer,
            tag,
            outcome: outcome(&hashes),
        };
        self.messages.push(message);
    }

    /// Appends a call, interning its group and kind.
    pub fn push(&mut self, seq: u64, at_ns: u64, group: Group, kind: Kind, outcome: Outcome) {
        let call = Call {
            seq,
            at_ns,
            group: self.group_id(group),
            kind: self.kind_id(kind),
            outcome,
        };
        self.calls.push(call);
    }

    /// The index of `group` in [`RankCollectives::groups`], added if new.
    pub fn group_id(&mut self, group: Group) -> u32 {
        (match self.groups.iter().position(|g| *g == group) {
            Some(i) => i,
            None => {
                self.groups.push(group);
                self.groups.len() - 1
            }
        }) as u32
    }

    /// The index of `kind` in [`RankCollectives::kinds`], added if new.
    pub fn kind_id(&mut self, kind: Kind) -> u32 {
        match self.kind_ids.get(&kind) {
            Some(&id) => id,
            None => {
                let id = self.kinds.len() as u32;
                self.kind_ids.insert(kind.clone(), id);
                self.kinds.push(kind);
                id
            }
        }
    }
}

/// Which end of a point-to-point transfer op `name` is; None for any
/// other op.
pub fn end_of(name: &str) -> Option<End> {
    match name.split('.').next().unwrap_or(name) {
        "c10d::send" => Some(End::Send),
        "c10d::recv_" | "c10d::recv_any_source_" => Some(End::Receive),
        _ => None,
    }
}

/// What the hashes after a call of its result tensors say; no tensors:
/// not shared.
fn outcome(results: &[Option<u64>]) -> Outcome {
    match results {
        [] => Outcome::NotShared,
        _ if results.iter().any(Option::is_none) => Outcome::Unhashed,
        [Some(one)] => Outcome::Hash(*one),
        several => Outcome::Hash(
            several
                .iter()
                .flatten()
                .fold(several.len() as u64, |h, x| fmix64(h ^ x)),
        ),
    }
}

/// What op `name` (`c10d::allreduce_`, `_c10d_functional::all_reduce`)
/// promises; None for what is not a collective (`wait_tensor`).
pub fn agreement(name: &str) -> Option<Agreement> {
    let (namespace, base) = name.split_once("::")?;
    if namespace != "c10d" && namespace != "_c10d_functional" {
        return None;
    }
    let base = base.split('.').next().unwrap_or(base);
    let base = base.trim_start_matches('_').trim_end_matches('_');
    Some(match base {
        "wait_tensor" => return None,
        b if b.starts_with("allreduce")
            || b.starts_with("all_reduce")
            || b.starts_with("allgather")
            || b.starts_with("all_gather")
            || b == "broadcast" =>
        {
            Agreement::Results
        }
        b if b.starts_with("alltoall")
            || b.starts_with("all_to_all")
            || b == "gather"
            || b == "scatter" =>
        {
            Agreement::Order
        }
        _ => Agreement::Shapes,
    })
}

/// Whether a tensor argument of a collective whose members share its
/// result holds that result: what the op writes (recorders before trace
/// format 1.7 marked every c10d tensor read-only, so the names say it
/// there), not what it reads.
fn holds_result(name: &str, access: Access) -> bool {
    access != Access::In || name.starts_with("tensors[") || name.starts_with("output")
}

/// Takes what the scalar argument `name` says about the call.
fn read_scalar(name: &str, value: &Scalar, group: &mut Group, kind: &mut Kind) {
    match (name, value) {
        ("process_group", Scalar::Str(text)) => {
            if let Some(named) = parse_process_group(text) {
                *group = named;
            }
        }
        ("group_name", Scalar::Str(text)) => group.name = text.clone(),
        ("reduce_op", Scalar::Str(text)) => {
            let op = text
                .strip_prefix("<ReduceOp ")
                .and_then(|t| t.strip_suffix('>'))
                .unwrap_or(text);
            kind.reduce_op = Some(op.to_ascii_uppercase());
        }
        ("root_rank" | "src", Scalar::Int(root)) => kind.root = Some(*root),
        _ => {}
    }
}

/// `<ProcessGroup name=N backend=B ranks=R>` as the recorder writes a
/// process group (docs/trace-format.md, host objects).
fn parse_process_group(text: &str) -> Option<Group> {
    let fields = text.strip_prefix("<ProcessGroup ")?.strip_suffix('>')?;
    let mut group = Group::default();
    for field in fields.split(' ') {
        match field.split_once('=')? {
            ("name", name) => group.name = name.to_owned(),
            ("backend", backend) => group.backend = Some(backend.to_owned()),
            ("ranks", ranks) => {
                group.members = ranks.split(',').map(|r| r.parse().ok()).collect();
            }
            _ => {}
        }
    }
    (!group.name.is_empty()).then_some(group)
}

/// The hashes of a list collective's pieces on one member.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Pieces {
    /// What it put in, piece by piece (hash before, or after where the
    /// hash before was inherited).
    pub ins: Vec<Option<u64>>,
    /// What it got, piece by piece (hash after).
    pub outs: Vec<Option<u64>>,
}

/// Which input of member `from` (by group rank) member `to` gets as its
/// piece `from`, for op `op`; None when `op` is not a list collective
/// checked here.
pub(super) fn input_for(op: &str, to: usize) -> Option<usize> {
    match op.split('.').next().unwrap_or(op) {
        "c10d::allgather_" => Some(0),
        "c10d::alltoall_" => Some(to),
        _ => None,
    }
}

/// Whether op `name` puts its pieces in tensor lists (`pieces` checks
/// them).
pub fn is_list_collective(name: &str) -> bool {
    input_for(name, 0).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_groups_and_reduce_ops_are_read_as_the_recorder_writes_them() {
        let group = parse_process_group("<ProcessGroup name=3 backend=nccl ranks=0,2,4>").unwrap();
        assert_eq!(group.name, "3");
        assert_eq!(group.backend.as_deref(), Some("nccl"));
        assert_eq!(group.members, Some(vec![0, 2, 4]));
        let unknown = parse_process_group("<ProcessGroup name=1 backend=gloo ranks=?>").unwrap();
        assert_eq!(unknown.members, None);
        assert!(parse_process_group("<object torch.ScriptObject>").is_none());
        let (mut group, mut kind) = (Group::default(), Kind::default());
        read_scalar(
            "reduce_op",
            &Scalar::Str("<ReduceOp MAX>".into()),
            &mut group,
            &mut kind,
        );
        assert_eq!(kind.reduce_op.as_deref(), Some("MAX"));
        read_scalar(
            "reduce_op",
            &Scalar::Str("avg".into()),
            &mut group,
            &mut kind,
        );
        assert_eq!(kind.reduce_op.as_deref(), Some("AVG"));
        read_scalar(
            "group_name",
            &Scalar::Str("7".into()),
            &mut group,
            &mut kind,
        );
        assert_eq!(group.name, "7");
    }

    #[test]
    fn ops_are_told_apart_by_what_their_members_share() {
        assert_eq!(agreement("c10d::allreduce_"), Some(Agreement::Results));
        assert_eq!(
            agreement("_c10d_functional::all_gather_into_tensor"),
            Some(Agreement::Results)
        );
        assert_eq!(
            agreement("c10d::_allgather_base_"),
            Some(Agreement::Results)
        );
        assert_eq!(agreement("c10d::broadcast_"), Some(Agreement::Results));
        assert_eq!(
            agreement("c10d::_reduce_scatter_base_"),
            Some(Agreement::Shapes)
        );
        assert_eq!(agreement("c10d::alltoall_base_"), Some(Agreement::Order));
        assert_eq!(agreement("_c10d_functional::wait_tensor"), None);
        assert_eq!(agreement("aten::add_"), None);
    }

    #[test]
    fn outcomes_keep_one_hash_as_it_is_and_fold_several() {
        assert_eq!(outcome(&[]), Outcome::NotShared);
        assert_eq!(outcome(&[Some(5), None]), Outcome::Unhashed);
        assert_eq!(outcome(&[Some(5)]), Outcome::Hash(5));
        assert_ne!(outcome(&[Some(5), Some(6)]), outcome(&[Some(6), Some(5)]));
    }

    #[test]
    fn calls_share_their_interned_group_and_kind() {
        let mut rank = RankCollectives::default();
        let group = Group {
            name: "0".into(),
            ..Group::default()
        };
        let kind = Kind {
            op: "c10d::allreduce_".into(),
            ..Kind::default()
        };
        for seq in 0..3 {
            rank.push(seq, seq, group.clone(), kind.clone(), Outcome::Hash(seq));
        }
        assert_eq!(
            (rank.groups.len(), rank.kinds.len(), rank.calls.len()),
            (1, 1, 3)
        );
    }
}

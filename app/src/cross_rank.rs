//! The ranks of one run checked against each other through their
//! collectives (`tritontui ranks RUN_DIR`): every member of a process
//! group must run the same collectives on it in the same order, with the
//! same op, reduce op, root and shapes, and the collectives whose result
//! is the same on every member (all-reduce, all-gather, broadcast) must
//! leave equal hashes. The first collective where ranks part either way
//! is reported: a desynchronised rank, or silent data corruption.
//!
//! Ranks are read a few at a time and kept only as their collectives, so
//! a run of many ranks is checked in bounded memory.

use crate::rank_diff::{in_parallel, rank_traces};
use anyhow::Context;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use tritontui_trace::{Access, ArgRef, Scalar, Trace};

/// Shape version of the JSON document.
pub const RANK_CHECK_VERSION: u32 = 1;
/// Most rank traces loaded at once.
const MAX_LOADED: usize = 8;

/// The ranks of one run, checked against each other.
#[derive(Debug, Serialize)]
pub struct RankCheck {
    /// Shape version of this document.
    pub report_version: u32,
    /// The run folder.
    pub run: String,
    /// The ranks found, in order.
    pub ranks: Vec<u32>,
    /// Each process group the collectives ran on.
    pub groups: Vec<GroupSummary>,
    /// Collectives across all ranks.
    pub collectives: usize,
    /// Collectives (counted once per group position) whose results were
    /// compared across their group's members.
    pub results_compared: usize,
    /// Of those that should have been, how many could not be (a member
    /// recorded no hash after them).
    pub results_unhashed: usize,
    /// The first collective whose ranks disagree on what ran (op, reduce
    /// op, root, shapes, or a member that never ran it); null when none.
    pub first_sequence_mismatch: Option<Finding>,
    /// The first collective whose result differs between members that
    /// should hold the same bytes; null when none.
    pub first_result_mismatch: Option<Finding>,
}

impl RankCheck {
    /// Whether the ranks agree everywhere.
    pub fn agree(&self) -> bool {
        self.first_sequence_mismatch.is_none() && self.first_result_mismatch.is_none()
    }
}

/// One process group as the ranks' collectives name it.
#[derive(Debug, Serialize)]
pub struct GroupSummary {
    /// Its name (`"0"` is the default group); `"?"` in traces that do not
    /// name groups.
    pub name: String,
    /// Its backend, when the trace says.
    pub backend: Option<String>,
    /// Its members' global ranks: as the trace records them, else the
    /// ranks that ran collectives on it.
    pub members: Vec<u32>,
    /// Collectives on it, per member (the most any member ran).
    pub collectives: usize,
}

/// Where the ranks part.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// The process group.
    pub group: String,
    /// Which collective on that group, counting from 0.
    pub index: usize,
    /// The op, as the first member that ran it names it.
    pub op: String,
    /// What differs: `missing` (a member never ran it), `op`,
    /// `reduce op`, `root`, `shapes`, or `results`.
    pub what: String,
    /// Each member: its launch and what it had there.
    pub ranks: Vec<RankValue>,
}

/// One member's side of a [`Finding`].
#[derive(Debug, Clone, Serialize)]
pub struct RankValue {
    /// The rank.
    pub rank: u32,
    /// Its launch (`seq`), null when it ran no such collective.
    pub launch: Option<u64>,
    /// What it had: the op, reduce op, root, shapes, or result hashes.
    pub value: String,
}

/// One collective as one rank ran it.
#[derive(Debug, Clone)]
struct Collective {
    seq: u64,
    /// ns since the Unix epoch (the rank's clock).
    at_ns: u64,
    op: String,
    group: Group,
    reduce_op: Option<String>,
    root: Option<i64>,
    /// Dtype and shape of each tensor argument, in order.
    shapes: Vec<String>,
    /// Hashes after it of the tensors that hold its result.
    results: Vec<Option<u64>>,
}

/// A process group as a collective's arguments name it.
#[derive(Debug, Clone, Default)]
struct Group {
    name: String,
    backend: Option<String>,
    members: Option<Vec<u32>>,
}

/// What the members of a group should agree on for an op, beyond running
/// it in the same order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agreement {
    /// Same shapes, and the same result on every member.
    Results,
    /// Same shapes; results differ by design (reduce-scatter, reduce).
    Shapes,
    /// Shapes may differ by design too (all-to-all, gather, scatter).
    Order,
}

/// What op `name` (`c10d::allreduce_`, `_c10d_functional::all_reduce`)
/// promises; None for what is not a collective (`wait_tensor`).
fn agreement(name: &str) -> Option<Agreement> {
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

/// Checks the ranks of run folder `run` against each other.
pub fn check(run: &Path) -> anyhow::Result<RankCheck> {
    let traces: Vec<(u32, std::path::PathBuf)> = rank_traces(run)?.into_iter().collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let read = in_parallel(&traces, cores.min(MAX_LOADED), |(rank, path)| {
        collectives_of(*rank, path)
    });
    let mut by_rank = BTreeMap::new();
    let mut world = None;
    for result in read {
        let (rank, world_size, collectives) = result?;
        world = world.max(world_size);
        by_rank.insert(rank, collectives);
    }
    if let Some(world) = world {
        let missing: Vec<String> = (0..world)
            .filter(|r| !by_rank.contains_key(r))
            .map(|r| r.to_string())
            .collect();
        if !missing.is_empty() {
            anyhow::bail!(
                "{}: the run has {world} ranks but no trace of rank {}",
                run.display(),
                missing.join(", ")
            );
        }
    }
    Ok(compare_ranks(run, &by_rank))
}

/// A rank trace's rank, world size and collectives.
fn collectives_of(rank: u32, path: &Path) -> anyhow::Result<(u32, Option<u32>, Vec<Collective>)> {
    let trace = Trace::open(path).with_context(|| format!("rank {rank}"))?;
    let world = trace.header.distributed.as_ref().map(|d| d.world_size);
    let collectives = trace
        .program_launches()
        .filter_map(|(_, launch)| {
            let kernel = trace.kernel_of(launch);
            let agreement = agreement(&kernel.name)?;
            let mut collective = Collective {
                seq: launch.seq,
                at_ns: trace.header.created_ns + launch.ts,
                op: kernel.name.clone(),
                group: Group::default(),
                reduce_op: None,
                root: None,
                shapes: Vec::new(),
                results: Vec::new(),
            };
            for (i, arg) in trace.args_of(launch).enumerate() {
                let def = kernel.args.get(i);
                let name = def.map_or("", |d| d.name.as_str());
                match arg {
                    ArgRef::Scalar(value) => collective.read_scalar(name, value),
                    ArgRef::Tensor(t) => {
                        let l = t.layout;
                        collective.shapes.push(format!("{}{:?}", l.dtype, l.shape));
                        let access = def.map_or(Access::In, |d| d.access);
                        if agreement == Agreement::Results && holds_result(name, access) {
                            collective.results.push(t.post);
                        }
                    }
                }
            }
            if collective.group.name.is_empty() {
                collective.group.name = "?".into();
            }
            Some(collective)
        })
        .collect();
    Ok((rank, world, collectives))
}

/// Whether a tensor argument of a collective whose members share its
/// result holds that result: what the op writes (recorders before trace
/// format 1.7 marked every c10d tensor read-only, so the names say it
/// there), not what it reads.
fn holds_result(name: &str, access: Access) -> bool {
    access != Access::In || name.starts_with("tensors[") || name.starts_with("output")
}

impl Collective {
    /// Takes what the scalar argument `name` says about the collective.
    fn read_scalar(&mut self, name: &str, value: &Scalar) {
        match (name, value) {
            ("process_group", Scalar::Str(text)) => {
                if let Some(group) = parse_process_group(text) {
                    self.group = group;
                }
            }
            ("group_name", Scalar::Str(text)) => self.group.name = text.clone(),
            ("reduce_op", Scalar::Str(text)) => {
                let op = text
                    .strip_prefix("<ReduceOp ")
                    .and_then(|t| t.strip_suffix('>'))
                    .unwrap_or(text);
                self.reduce_op = Some(op.to_ascii_uppercase());
            }
            ("root_rank" | "src", Scalar::Int(root)) => self.root = Some(*root),
            _ => {}
        }
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

/// One group's collectives, by member.
struct GroupRun<'c> {
    summary: GroupSummary,
    by_member: BTreeMap<u32, Vec<&'c Collective>>,
}

/// Compares the ranks' collectives group by group.
fn compare_ranks(run: &Path, by_rank: &BTreeMap<u32, Vec<Collective>>) -> RankCheck {
    let groups = group_runs(by_rank);
    let mut check = RankCheck {
        report_version: RANK_CHECK_VERSION,
        run: run.display().to_string(),
        ranks: by_rank.keys().copied().collect(),
        groups: Vec::new(),
        collectives: by_rank.values().map(Vec::len).sum(),
        results_compared: 0,
        results_unhashed: 0,
        first_sequence_mismatch: None,
        first_result_mismatch: None,
    };
    // Each finding with when it happened (its earliest member's clock).
    let mut sequence: Option<(u64, Finding)> = None;
    let mut results: Option<(u64, Finding)> = None;
    for group in groups {
        for index in 0..group.summary.collectives {
            let at: Vec<(u32, Option<&Collective>)> = group
                .by_member
                .iter()
                .map(|(rank, list)| (*rank, list.get(index).copied()))
                .collect();
            let when = at
                .iter()
                .filter_map(|(_, c)| c.map(|c| c.at_ns))
                .min()
                .unwrap_or(u64::MAX);
            if let Some(finding) = sequence_mismatch(&group.summary.name, index, &at) {
                keep_earliest(&mut sequence, when, finding);
                break; // past a mismatch the members' collectives no longer pair up
            }
            match result_mismatch(&group.summary.name, index, &at) {
                Compared::NotShared => {}
                Compared::Unhashed => check.results_unhashed += 1,
                Compared::Equal => check.results_compared += 1,
                Compared::Differ(finding) => {
                    check.results_compared += 1;
                    keep_earliest(&mut results, when, finding);
                }
            }
        }
        check.groups.push(group.summary);
    }
    check.first_sequence_mismatch = sequence.map(|(_, f)| f);
    check.first_result_mismatch = results.map(|(_, f)| f);
    check
}

fn keep_earliest(slot: &mut Option<(u64, Finding)>, when: u64, finding: Finding) {
    if slot.as_ref().is_none_or(|(at, _)| when < *at) {
        *slot = Some((when, finding));
    }
}

/// The ranks' collectives sorted into their groups.
fn group_runs(by_rank: &BTreeMap<u32, Vec<Collective>>) -> Vec<GroupRun<'_>> {
    let mut groups: BTreeMap<&str, GroupRun<'_>> = BTreeMap::new();
    for (rank, collectives) in by_rank {
        for c in collectives {
            let group = groups.entry(&c.group.name).or_insert_with(|| GroupRun {
                summary: GroupSummary {
                    name: c.group.name.clone(),
                    backend: None,
                    members: Vec::new(),
                    collectives: 0,
                },
                by_member: BTreeMap::new(),
            });
            if group.summary.backend.is_none() {
                group.summary.backend.clone_from(&c.group.backend);
            }
            if let Some(members) = &c.group.members {
                // The recorded members, each with its list (a member that
                // ran nothing on the group shows as missing).
                for member in members {
                    group.by_member.entry(*member).or_default();
                }
            }
            group.by_member.entry(*rank).or_default().push(c);
        }
    }
    groups
        .into_values()
        .map(|mut group| {
            // Only ranks the run has traces of can be compared.
            group.by_member.retain(|rank, _| by_rank.contains_key(rank));
            group.summary.members = group.by_member.keys().copied().collect();
            group.summary.collectives = group.by_member.values().map(Vec::len).max().unwrap_or(0);
            group
        })
        .collect()
}

/// The first way the members' `index`-th collectives on `group` differ
/// in what ran, if they do.
fn sequence_mismatch(
    group: &str,
    index: usize,
    at: &[(u32, Option<&Collective>)],
) -> Option<Finding> {
    let first = at.iter().find_map(|(_, c)| *c)?;
    let finding = |what: &str, value: &dyn Fn(&Collective) -> String| Finding {
        group: group.to_owned(),
        index,
        op: first.op.clone(),
        what: what.to_owned(),
        ranks: at
            .iter()
            .map(|(rank, c)| RankValue {
                rank: *rank,
                launch: c.map(|c| c.seq),
                value: c.map_or_else(|| "none".to_owned(), value),
            })
            .collect(),
    };
    let differs = |key: &dyn Fn(&Collective) -> String| {
        at.iter()
            .any(|(_, c)| c.is_some_and(|c| key(c) != key(first)))
    };
    if at.iter().any(|(_, c)| c.is_none()) {
        return Some(finding("missing", &|c| c.op.clone()));
    }
    let op = |c: &Collective| c.op.clone();
    let reduce_op = |c: &Collective| c.reduce_op.clone().unwrap_or_else(|| "-".into());
    let root = |c: &Collective| c.root.map_or_else(|| "-".into(), |r| r.to_string());
    let shapes = |c: &Collective| c.shapes.join(" ");
    if differs(&op) {
        return Some(finding("op", &op));
    }
    if differs(&reduce_op) {
        return Some(finding("reduce op", &reduce_op));
    }
    if differs(&root) {
        return Some(finding("root", &root));
    }
    let agreement = agreement(&first.op).unwrap_or(Agreement::Order);
    if agreement != Agreement::Order && differs(&shapes) {
        return Some(finding("shapes", &shapes));
    }
    None
}

/// What comparing one collective's results across its members found.
enum Compared {
    /// Its members' results differ by design.
    NotShared,
    /// A member recorded no hash of its result.
    Unhashed,
    Equal,
    Differ(Finding),
}

/// Compares the members' results of a collective they all ran alike.
fn result_mismatch(group: &str, index: usize, at: &[(u32, Option<&Collective>)]) -> Compared {
    let Some((_, Some(first))) = at.first() else {
        return Compared::NotShared;
    };
    if agreement(&first.op) != Some(Agreement::Results) || first.results.is_empty() {
        return Compared::NotShared;
    }
    let members: Vec<(u32, &Collective)> =
        at.iter().filter_map(|(r, c)| c.map(|c| (*r, c))).collect();
    if members
        .iter()
        .any(|(_, c)| c.results.iter().any(Option::is_none))
    {
        return Compared::Unhashed;
    }
    if members.iter().all(|(_, c)| c.results == first.results) {
        return Compared::Equal;
    }
    Compared::Differ(Finding {
        group: group.to_owned(),
        index,
        op: first.op.clone(),
        what: "results".into(),
        ranks: members
            .iter()
            .map(|(rank, c)| RankValue {
                rank: *rank,
                launch: Some(c.seq),
                value: c
                    .results
                    .iter()
                    .map(|h| h.map_or_else(|| "-".into(), |h| format!("{h:#018x}")))
                    .collect::<Vec<_>>()
                    .join(" "),
            })
            .collect(),
    })
}

/// The human summary of `tritontui ranks`.
pub fn summary(check: &RankCheck) -> String {
    let groups = check.groups.len();
    let mut out = format!(
        "{}  {} ranks, {} collective calls on {groups} process group{}; the results of {} collectives compared across their members",
        check.run,
        check.ranks.len(),
        check.collectives,
        if groups == 1 { "" } else { "s" },
        check.results_compared,
    );
    if check.results_unhashed > 0 {
        out += &format!(" ({} more not hashed)", check.results_unhashed);
    }
    out.push('\n');
    for (title, finding) in [
        (
            "first collective the ranks ran differently",
            &check.first_sequence_mismatch,
        ),
        (
            "first collective whose results differ across ranks",
            &check.first_result_mismatch,
        ),
    ] {
        let Some(f) = finding else {
            continue;
        };
        out += &format!(
            "\n{title}: {} #{} on process group {}: {}\n",
            f.op,
            f.index,
            f.group,
            what_differs(&f.what)
        );
        // Members with the same value on one line: a run has many ranks.
        let mut values: Vec<(&str, Vec<&RankValue>)> = Vec::new();
        for r in &f.ranks {
            match values.iter_mut().find(|(v, _)| *v == r.value) {
                Some((_, members)) => members.push(r),
                None => values.push((&r.value, vec![r])),
            }
        }
        for (value, members) in values {
            let ranks: Vec<u32> = members.iter().map(|r| r.rank).collect();
            let mut launches: Vec<String> = members
                .iter()
                .filter_map(|r| r.launch.map(|seq| format!("#{seq}")))
                .collect();
            launches.dedup();
            let launches = match launches.as_slice() {
                [] => "no launch".to_owned(),
                [one] => format!("launch {one}"),
                _ => "launches differ".to_owned(),
            };
            out += &format!(
                "  {value}  on rank{} {} ({launches})\n",
                if ranks.len() == 1 { "" } else { "s" },
                rank_ranges(&ranks)
            );
        }
    }
    out += if check.agree() {
        "\nthe ranks agree: the same collectives in the same order, the same results where they must be\n"
    } else {
        "\nthe ranks disagree\n"
    };
    out
}

/// Sorted ranks as ranges: `0-2,5`.
fn rank_ranges(ranks: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            ranks[i].to_string()
        } else {
            format!("{}-{}", ranks[i], ranks[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// A finding's `what` in words.
fn what_differs(what: &str) -> String {
    match what {
        "missing" => {
            "a member never ran it (a desynchronised rank, or one whose trace ends early)".into()
        }
        "results" => {
            "its members hold different bytes after it, where they must hold the same".into()
        }
        other => format!("the {other} differs between members"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collective(seq: u64, op: &str, group: &str, members: Option<Vec<u32>>) -> Collective {
        Collective {
            seq,
            at_ns: seq * 1000,
            op: op.into(),
            group: Group {
                name: group.into(),
                backend: Some("gloo".into()),
                members,
            },
            reduce_op: None,
            root: None,
            shapes: vec!["float32[8]".into()],
            results: vec![Some(7)],
        }
    }

    fn checked(by_rank: BTreeMap<u32, Vec<Collective>>) -> RankCheck {
        compare_ranks(Path::new("run"), &by_rank)
    }

    #[test]
    fn process_groups_and_reduce_ops_are_read_as_the_recorder_writes_them() {
        let group = parse_process_group("<ProcessGroup name=3 backend=nccl ranks=0,2,4>").unwrap();
        assert_eq!(group.name, "3");
        assert_eq!(group.backend.as_deref(), Some("nccl"));
        assert_eq!(group.members, Some(vec![0, 2, 4]));
        let unknown = parse_process_group("<ProcessGroup name=1 backend=gloo ranks=?>").unwrap();
        assert_eq!(unknown.members, None);
        assert!(parse_process_group("<object torch.ScriptObject>").is_none());
        let mut c = collective(0, "c10d::allreduce_", "", None);
        c.read_scalar("reduce_op", &Scalar::Str("<ReduceOp MAX>".into()));
        assert_eq!(c.reduce_op.as_deref(), Some("MAX"));
        c.read_scalar("reduce_op", &Scalar::Str("avg".into()));
        assert_eq!(c.reduce_op.as_deref(), Some("AVG"));
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
    fn equal_ranks_agree_and_a_differing_result_is_found() {
        let run = |post: u64| {
            BTreeMap::from([
                (0, vec![collective(1, "c10d::allreduce_", "0", None)]),
                (1, {
                    let mut c = collective(1, "c10d::allreduce_", "0", None);
                    c.results = vec![Some(post)];
                    vec![c]
                }),
            ])
        };
        let agree = checked(run(7));
        assert!(agree.agree());
        assert_eq!(agree.results_compared, 1);
        let corrupt = checked(run(8));
        let found = corrupt.first_result_mismatch.expect("a result mismatch");
        assert_eq!((found.what.as_str(), found.index), ("results", 0));
        assert_eq!(found.ranks[1].value, format!("{:#018x}", 8));
        assert!(corrupt.first_sequence_mismatch.is_none());
    }

    #[test]
    fn results_of_reduce_scatter_are_not_compared_nor_shapes_of_all_to_all() {
        let mut a = collective(1, "c10d::_reduce_scatter_base_", "0", None);
        let mut b = a.clone();
        b.results = vec![Some(9)];
        let mut x = collective(2, "c10d::alltoall_base_", "0", None);
        let mut y = x.clone();
        y.shapes = vec!["float32[12]".into()];
        (a.results, x.results) = (vec![], vec![]);
        y.results.clear();
        let check = checked(BTreeMap::from([(0, vec![a, x]), (1, vec![b, y])]));
        assert!(check.agree(), "{check:?}");
        assert_eq!(check.results_compared, 0);
    }

    #[test]
    fn a_sequence_mismatch_names_what_differs() {
        let base = || collective(1, "c10d::allreduce_", "0", None);
        let with = |change: &dyn Fn(&mut Collective)| {
            let mut other = base();
            change(&mut other);
            let check = checked(BTreeMap::from([(0, vec![base()]), (1, vec![other])]));
            check.first_sequence_mismatch.expect("a mismatch").what
        };
        assert_eq!(with(&|c| c.op = "c10d::broadcast_".into()), "op");
        assert_eq!(with(&|c| c.reduce_op = Some("MAX".into())), "reduce op");
        assert_eq!(with(&|c| c.root = Some(1)), "root");
        assert_eq!(with(&|c| c.shapes = vec!["float32[9]".into()]), "shapes");
    }

    #[test]
    fn a_member_that_never_ran_a_collective_is_missing() {
        // Rank 1 stops after one all-reduce; rank 0 runs a second.
        let check = checked(BTreeMap::from([
            (
                0,
                vec![
                    collective(1, "c10d::allreduce_", "0", None),
                    collective(5, "c10d::allreduce_", "0", None),
                ],
            ),
            (1, vec![collective(1, "c10d::allreduce_", "0", None)]),
        ]));
        let found = check.first_sequence_mismatch.expect("missing");
        assert_eq!((found.what.as_str(), found.index), ("missing", 1));
        assert_eq!(found.ranks[1].launch, None);
        // A recorded member of a group that ran nothing on it is missing too.
        let members = Some(vec![0, 1]);
        let check = checked(BTreeMap::from([
            (0, vec![collective(1, "c10d::allreduce_", "1", members)]),
            (1, vec![collective(1, "c10d::allreduce_", "0", None)]),
        ]));
        let found = check.first_sequence_mismatch.expect("missing");
        assert_eq!(
            (found.group.as_str(), found.what.as_str()),
            ("1", "missing")
        );
    }

    #[test]
    fn groups_are_sequenced_apart_and_the_earliest_finding_wins() {
        let with_result = |mut c: Collective, post: u64| {
            c.results = vec![Some(post)];
            c
        };
        // Rank 0 runs a collective on a group of its own between the world
        // all-reduces: no mismatch. The world's second all-reduce (at 9 µs)
        // and group 5's (at 3 µs) both disagree: group 5's came first.
        let world = |seq| collective(seq, "c10d::allreduce_", "0", None);
        let pair = |seq| collective(seq, "c10d::allreduce_", "5", Some(vec![0, 1]));
        let own = collective(2, "c10d::allreduce_", "1", Some(vec![0]));
        let check = checked(BTreeMap::from([
            (0, vec![world(1), own, pair(3), world(9)]),
            (
                1,
                vec![world(1), with_result(pair(3), 4), with_result(world(9), 2)],
            ),
        ]));
        assert!(check.first_sequence_mismatch.is_none(), "{check:?}");
        assert_eq!(check.groups.len(), 3);
        let found = check.first_result_mismatch.expect("mismatch");
        assert_eq!((found.group.as_str(), found.index), ("5", 0));
    }

    #[test]
    fn rank_ranges_fold_consecutive_ranks() {
        assert_eq!(rank_ranges(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(rank_ranges(&[3]), "3");
    }

    #[test]
    fn a_run_missing_a_rank_s_trace_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let spec = crate::synth::Spec {
            launches: 24,
            injections: Vec::new(),
            autotune: false,
        };
        let ranks = crate::synth::RankSpec {
            ranks: 3,
            fault_rank: 0,
            corrupt_collective: Some(1),
        };
        crate::synth::generate_ranks(&spec, &ranks, |is_b, rank| {
            let run = dir.path().join(if is_b { "b" } else { "a" });
            std::fs::create_dir_all(&run)?;
            std::fs::File::create(run.join(format!("rank{rank}.msgpack")))
        })
        .unwrap();
        assert!(check(&dir.path().join("a")).unwrap().agree());
        let found = check(&dir.path().join("b")).unwrap().first_result_mismatch;
        assert_eq!(found.map(|f| f.index), Some(1));
        std::fs::remove_file(dir.path().join("a/rank1.msgpack")).unwrap();
        let err = check(&dir.path().join("a")).unwrap_err().to_string();
        assert!(
            err.contains("the run has 3 ranks but no trace of rank 1"),
            "{err}"
        );
    }
}

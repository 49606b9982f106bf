//! The ranks of one run checked against each other through their
//! collectives (`tritontui ranks RUN_DIR`): every member of a process
//! group must run the same collectives on it in the same order, with the
//! same op, reduce op, root and shapes, and the collectives whose result
//! is the same on every member (all-reduce, all-gather, broadcast) must
//! leave equal hashes. The first collective where ranks part either way
//! is reported: a desynchronised rank, or silent data corruption.
//! Point-to-point sends are paired with their receives the same way
//! (`messages`).
//!
//! Ranks are read a few at a time and kept only as their collectives, so
//! a run of many ranks is checked in bounded memory.

mod collectives;
mod findings;
mod messages;
mod pieces;
mod summary;

use crate::ranks::diff::{in_parallel, rank_traces};
use anyhow::Context;
use collectives::{Agreement, Kind, Outcome, RankCollectives, agreement};
pub use findings::{Finding, GroupSummary, RankCheck, RankValue};
use findings::{Ran, keep_earliest};
use std::collections::BTreeMap;
use std::path::Path;
pub use summary::summary;

/// Shape version of the JSON document.
pub const RANK_CHECK_VERSION: u32 = 1;
/// Most rank traces loaded at once.
const MAX_LOADED: usize = 8;

/// Checks the ranks of run folder `run` against each other.
pub fn check(run: &Path) -> anyhow::Result<RankCheck> {
    let traces: Vec<(u32, std::path::PathBuf)> = rank_traces(run)?.into_iter().collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let read = in_parallel(&traces, cores.min(MAX_LOADED), |(rank, path)| {
        RankCollectives::read(path).with_context(|| format!("rank {rank}"))
    });
    let mut by_rank = BTreeMap::new();
    let mut world = None;
    for ((rank, _), collectives) in traces.iter().zip(read) {
        let collectives = collectives?;
        world = world.max(collectives.world_size);
        by_rank.insert(*rank, collectives);
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

/// One group's calls, by member: indices into the member's calls.
struct GroupRun {
    summary: GroupSummary,
    by_member: BTreeMap<u32, Vec<u32>>,
    /// Its members' global ranks by group rank: as recorded, else in
    /// order.
    order: Vec<u32>,
}

/// Compares the ranks' collectives group by group.
fn compare_ranks(run: &Path, by_rank: &BTreeMap<u32, RankCollectives>) -> RankCheck {
    let groups = group_runs(by_rank);
    let mut check = RankCheck {
        report_version: RANK_CHECK_VERSION,
        run: run.display().to_string(),
        ranks: by_rank.keys().copied().collect(),
        groups: Vec::new(),
        collectives: by_rank.values().map(|r| r.calls.len()).sum(),
        results_compared: 0,
        results_unhashed: 0,
        pieces_compared: 0,
        messages: 0,
        messages_compared: 0,
        first_sequence_mismatch: None,
        first_result_mismatch: None,
    };
    // Each finding with when it happened (its earliest member's clock).
    let paired = messages::pair(by_rank);
    check.messages = paired.messages;
    check.messages_compared = paired.compared;
    let mut sequence: Option<(u64, Finding)> = paired.sequence;
    let mut results: Option<(u64, Finding)> = paired.results;
    for group in groups {
        for index in 0..group.summary.collectives {
            let at: Vec<(u32, Option<Ran<'_>>)> = group
                .by_member
                .iter()
                .map(|(&rank, calls)| {
                    let collectives = &by_rank[&rank];
                    let ran = calls.get(index).map(|&i| {
                        let call = &collectives.calls[i as usize];
                        Ran {
                            call,
                            kind: &collectives.kinds[call.kind as usize],
                        }
                    });
                    (rank, ran)
                })
                .collect();
            let when = at
                .iter()
                .filter_map(|(_, ran)| ran.map(|r| r.call.at_ns))
                .min()
                .unwrap_or(u64::MAX);
            if let Some(finding) = sequence_mismatch(&group.summary.name, index, &at) {
                keep_earliest(&mut sequence, when, finding);
                break; // past a mismatch the members' collectives no longer pair up
            }
            let ran: Vec<(u32, Ran<'_>)> = at
                .iter()
                .filter_map(|&(rank, ran)| ran.map(|r| (rank, r)))
                .collect();
            match result_mismatch(&group.summary.name, index, &ran) {
                Compared::NotShared => {}
                Compared::Unhashed => check.results_unhashed += 1,
                Compared::Equal => check.results_compared += 1,
                Compared::Differ(finding) => {
                    check.results_compared += 1;
                    keep_earliest(&mut results, when, finding);
                }
            }
            let pieces = |rank: u32, seq: u64| by_rank.get(&rank)?.pieces.get(&seq);
            match pieces::check(&group.summary.name, index, &group.order, &ran, pieces) {
                pieces::PieceCheck::Skipped => {}
                pieces::PieceCheck::Equal => check.pieces_compared += 1,
                pieces::PieceCheck::Differ(finding) => {
                    check.pieces_compared += 1;
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

/// The ranks' calls sorted into their groups.
fn group_runs(by_rank: &BTreeMap<u32, RankCollectives>) -> Vec<GroupRun> {
    let mut groups: BTreeMap<&str, GroupRun> = BTreeMap::new();
    for (&rank, collectives) in by_rank {
        // The groups this rank names (a few), each once.
        for named in &collectives.groups {
            let group = groups.entry(&named.name).or_insert_with(|| GroupRun {
                summary: GroupSummary {
                    name: named.name.clone(),
                    backend: None,
                    members: Vec::new(),
                    collectives: 0,
                },
                by_member: BTreeMap::new(),
                order: Vec::new(),
            });
            if group.order.is_empty() {
                group.order = named.members.clone().unwrap_or_default();
            }
            if group.summary.backend.is_none() {
                group.summary.backend.clone_from(&named.backend);
            }
            // The recorded members, each with its list (a member that ran
            // nothing on the group shows as missing).
            for member in named.members.iter().flatten() {
                group.by_member.entry(*member).or_default();
            }
        }
        for (index, call) in collectives.calls.iter().enumerate() {
            let name = collectives.groups[call.group as usize].name.as_str();
            if let Some(group) = groups.get_mut(name) {
                group.by_member.entry(rank).or_default().push(index as u32);
            }
        }
    }
    groups
        .into_values()
        .map(|mut group| {
            // Only ranks the run has traces of can be compared.
            group.by_member.retain(|rank, _| by_rank.contains_key(rank));
            group.summary.members = group.by_member.keys().copied().collect();
            if group.order.is_empty() {
                group.order.clone_from(&group.summary.members);
            }
            group.summary.collectives = group.by_member.values().map(Vec::len).max().unwrap_or(0);
            group
        })
        .collect()
}

/// The first way the members' `index`-th collectives on `group` differ
/// in what ran, if they do.
fn sequence_mismatch(group: &str, index: usize, at: &[(u32, Option<Ran<'_>>)]) -> Option<Finding> {
    let first = at.iter().find_map(|(_, ran)| *ran)?.kind;
    if at
        .iter()
        .all(|(_, ran)| ran.is_some_and(|r| r.kind == first))
    {
        return None; // the common case: every member ran the very same
    }
    let finding = |what: &str, value: &dyn Fn(&Kind) -> String| Finding {
        group: group.to_owned(),
        index,
        op: first.op.clone(),
        what: what.to_owned(),
        ranks: at
            .iter()
            .map(|(rank, ran)| RankValue {
                rank: *rank,
                launch: ran.map(|r| r.call.seq),
                value: ran.map_or_else(|| "none".to_owned(), |r| value(r.kind)),
            })
            .collect(),
    };
    let differs = |key: &dyn Fn(&Kind) -> String| {
        at.iter()
            .any(|(_, ran)| ran.is_some_and(|r| key(r.kind) != key(first)))
    };
    if at.iter().any(|(_, ran)| ran.is_none()) {
        return Some(finding("missing", &|k| k.op.clone()));
    }
    let op = |k: &Kind| k.op.clone();
    let reduce_op = |k: &Kind| k.reduce_op.clone().unwrap_or_else(|| "-".into());
    let root = |k: &Kind| k.root.map_or_else(|| "-".into(), |r| r.to_string());
    let shapes = |k: &Kind| k.shapes.clone();
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

/// Compares the results of a collective every member (by rank) ran alike.
fn result_mismatch(group: &str, index: usize, ran: &[(u32, Ran<'_>)]) -> Compared {
    let Some((_, first)) = ran.first() else {
        return Compared::NotShared;
    };
    let outcomes = || ran.iter().map(|(_, r)| r.call.outcome);
    if outcomes().any(|o| o == Outcome::NotShared) {
        return Compared::NotShared;
    }
    if outcomes().any(|o| o == Outcome::Unhashed) {
        return Compared::Unhashed;
    }
    if outcomes().all(|o| o == first.call.outcome) {
        return Compared::Equal;
    }
    Compared::Differ(Finding {
        group: group.to_owned(),
        index,
        op: first.kind.op.clone(),
        what: "results".into(),
        ranks: ran
            .iter()
            .map(|(rank, r)| RankValue {
                rank: *rank,
                launch: Some(r.call.seq),
                value: match r.call.outcome {
                    Outcome::Hash(h) => format!("{h:#018x}"),
                    _ => "-".into(),
                },
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::collectives::Group;
    use super::*;

    /// A call as a test spells it.
    #[derive(Debug, Clone)]
    struct Spec {
        seq: u64,
        group: &'static str,
        members: Option<Vec<u32>>,
        kind: Kind,
        outcome: Outcome,
    }

    fn call(seq: u64, op: &str, group: &'static str, members: Option<Vec<u32>>) -> Spec {
        Spec {
            seq,
            group,
            members,
            kind: Kind {
                op: op.into(),
                shapes: "float32[8]".into(),
                ..Kind::default()
            },
            outcome: Outcome::Hash(7),
        }
    }

    fn with(mut spec: Spec, change: impl FnOnce(&mut Spec)) -> Spec {
        change(&mut spec);
        spec
    }

    fn checked(ranks: Vec<(u32, Vec<Spec>)>) -> RankCheck {
        let by_rank = ranks
            .into_iter()
            .map(|(rank, specs)| {
                let mut collectives = RankCollectives::default();
                for spec in specs {
                    let group = Group {
                        name: spec.group.into(),
                        backend: Some("gloo".into()),
                        members: spec.members,
                    };
                    collectives.push(spec.seq, spec.seq * 1000, group, spec.kind, spec.outcome);
                }
                (rank, collectives)
            })
            .collect();
        compare_ranks(Path::new("run"), &by_rank)
    }

    #[test]
    fn equal_ranks_agree_and_a_differing_result_is_found() {
        let run = |post: u64| {
            vec![
                (0, vec![call(1, "c10d::allreduce_", "0", None)]),
                (
                    1,
                    vec![with(call(1, "c10d::allreduce_", "0", None), |c| {
                        c.outcome = Outcome::Hash(post)
                    })],
                ),
            ]
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
        let scatter = with(call(1, "c10d::_reduce_scatter_base_", "0", None), |c| {
            c.outcome = Outcome::NotShared
        });
        let all_to_all = with(call(2, "c10d::alltoall_base_", "0", None), |c| {
            c.outcome = Outcome::NotShared
        });
        let uneven = with(all_to_all.clone(), |c| c.kind.shapes = "float32[12]".into());
        let check = checked(vec![
            (0, vec![scatter.clone(), all_to_all]),
            (1, vec![scatter, uneven]),
        ]);
        assert!(check.agree(), "{check:?}");
        assert_eq!(check.results_compared, 0);
    }

    #[test]
    fn a_sequence_mismatch_names_what_differs() {
        let base = || call(1, "c10d::allreduce_", "0", None);
        let what = |change: &dyn Fn(&mut Spec)| {
            let check = checked(vec![(0, vec![base()]), (1, vec![with(base(), change)])]);
            check.first_sequence_mismatch.expect("a mismatch").what
        };
        assert_eq!(what(&|c| c.kind.op = "c10d::broadcast_".into()), "op");
        assert_eq!(
            what(&|c| c.kind.reduce_op = Some("MAX".into())),
            "reduce op"
        );
        assert_eq!(what(&|c| c.kind.root = Some(1)), "root");
        assert_eq!(what(&|c| c.kind.shapes = "float32[9]".into()), "shapes");
    }

    #[test]
    fn a_member_that_never_ran_a_collective_is_missing() {
        // Rank 1 stops after one all-reduce; rank 0 runs a second.
        let check = checked(vec![
            (
                0,
                vec![
                    call(1, "c10d::allreduce_", "0", None),
                    call(5, "c10d::allreduce_", "0", None),
                ],
            ),
            (1, vec![call(1, "c10d::allreduce_", "0", None)]),
        ]);
        let found = check.first_sequence_mismatch.expect("missing");
        assert_eq!((found.what.as_str(), found.index), ("missing", 1));
        assert_eq!(found.ranks[1].launch, None);
        // A recorded member of a group that ran nothing on it is missing too.
        let check = checked(vec![
            (0, vec![call(1, "c10d::allreduce_", "1", Some(vec![0, 1]))]),
            (1, vec![call(1, "c10d::allreduce_", "0", None)]),
        ]);
        let found = check.first_sequence_mismatch.expect("missing");
        assert_eq!(
            (found.group.as_str(), found.what.as_str()),
            ("1", "missing")
        );
    }

    #[test]
    fn groups_are_sequenced_apart_and_the_earliest_finding_wins() {
        let differing = |spec: Spec| with(spec, |c| c.outcome = Outcome::Hash(4));
        // Rank 0 runs a collective on a group of its own between the world
        // all-reduces: no mismatch. The world's second all-reduce (at 9 µs)
        // and group 5's (at 3 µs) both disagree: group 5's came first.
        let world = |seq| call(seq, "c10d::allreduce_", "0", None);
        let pair = |seq| call(seq, "c10d::allreduce_", "5", Some(vec![0, 1]));
        let own = call(2, "c10d::allreduce_", "1", Some(vec![0]));
        let check = checked(vec![
            (0, vec![world(1), own, pair(3), world(9)]),
            (1, vec![world(1), differing(pair(3)), differing(world(9))]),
        ]);
        assert!(check.first_sequence_mismatch.is_none(), "{check:?}");
        assert_eq!(check.groups.len(), 3);
        let found = check.first_result_mismatch.expect("mismatch");
        assert_eq!((found.group.as_str(), found.index), ("5", 0));
    }

    #[test]
    fn a_run_missing_a_rank_s_trace_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let spec = tritontui_synth::Spec {
            launches: 24,
            injections: Vec::new(),
            autotune: false,
        };
        let ranks = tritontui_synth::RankSpec {
            ranks: 3,
            fault_rank: 0,
            corrupt_collective: Some(1),
        };
        tritontui_synth::generate_ranks(&spec, &ranks, |is_b, rank| {
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

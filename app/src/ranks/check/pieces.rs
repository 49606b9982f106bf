//! What went into an all-gather or all-to-all of tensor lists against
//! what came out: each member's output piece `j` is what member `j` (by
//! rank in the group) put in, its only input for an all-gather
//! (`c10d::allgather_`), its input piece for this member for an all-to-all
//! (`c10d::alltoall_`). The hashes of the pieces are in the trace, since
//! the lists' tensors are arguments of their own; a flat all-gather or
//! all-to-all (one tensor holding every piece) has no hash per piece and
//! is not checked this way.

use super::collectives::{Pieces, input_for, is_list_collective};
use super::findings::{Finding, Ran, RankValue};
use rustc_hash::FxHashMap;

/// What comparing the pieces found.
pub(super) enum PieceCheck {
    /// Not a list collective, or a piece unhashed.
    Skipped,
    /// Every piece came out as it went in.
    Equal,
    /// The first piece that did not.
    Differ(Finding),
}

/// Checks the `index`-th collective of `group`, which every member in
/// `order` (global ranks by group rank) ran alike as `ran`; `pieces`
/// finds a member's pieces by rank and launch.
pub(super) fn check<'p>(
    group: &str,
    index: usize,
    order: &[u32],
    ran: &[(u32, Ran<'_>)],
    pieces: impl Fn(u32, u64) -> Option<&'p Pieces>,
) -> PieceCheck {
    let Some((_, first)) = ran.first() else {
        return PieceCheck::Skipped;
    };
    if !is_list_collective(&first.kind.op) || ran.len() != order.len() {
        return PieceCheck::Skipped;
    }
    let seq_of: FxHashMap<u32, u64> = ran.iter().map(|(r, ran)| (*r, ran.call.seq)).collect();
    let of = |rank: u32| seq_of.get(&rank).and_then(|&seq| pieces(rank, seq));
    let mut hashed = true;
    for (to_index, &to) in order.iter().enumerate() {
        let Some(got) = of(to) else {
            return PieceCheck::Skipped;
        };
        let Some(input) = input_for(&first.kind.op, to_index) else {
            return PieceCheck::Skipped;
        };
        for (from_index, &from) in order.iter().enumerate() {
            let Some(sent) = of(from) else {
                return PieceCheck::Skipped;
            };
            let (Some(Some(out)), Some(Some(put))) =
                (got.outs.get(from_index), sent.ins.get(input))
            else {
                hashed = false;
                continue;
            };
            if out != put {
                let value = |h: &u64| format!("{h:#018x}");
                return PieceCheck::Differ(Finding {
                    group: group.to_owned(),
                    index,
                    op: first.kind.op.clone(),
                    what: "pieces".into(),
                    ranks: vec![
                        RankValue {
                            rank: from,
                            launch: Some(seq_of[&from]),
                            value: format!("sent {}", value(put)),
                        },
                        RankValue {
                            rank: to,
                            launch: Some(seq_of[&to]),
                            value: format!("got {}", value(out)),
                        },
                    ],
                });
            }
        }
    }
    if hashed {
        PieceCheck::Equal
    } else {
        PieceCheck::Skipped
    }
}

#[cfg(test)]
mod tests {
    use super::super::collectives::{Call, Kind, Outcome};
    use super::*;

    /// `outs[to][from]` got, `ins[from]` put in, by group rank; ranks 10,
    /// 11, 12 in that group order.
    fn checked(op: &str, ins: &[Vec<u64>], outs: &[Vec<u64>]) -> PieceCheck {
        let order = [10, 11, 12];
        let kind = Kind {
            op: op.into(),
            ..Kind::default()
        };
        let calls: Vec<Call> = (0..3)
            .map(|i| Call {
                seq: 100 + i,
                at_ns: 0,
                group: 0,
                kind: 0,
                outcome: Outcome::NotShared,
            })
            .collect();
        let ran: Vec<(u32, Ran<'_>)> = order
            .iter()
            .zip(&calls)
            .map(|(&rank, call)| (rank, Ran { call, kind: &kind }))
            .collect();
        let pieces: Vec<Pieces> = (0..3)
            .map(|i| Pieces {
                ins: ins[i].iter().copied().map(Some).collect(),
                outs: outs[i].iter().copied().map(Some).collect(),
            })
            .collect();
        check("0", 4, &order, &ran, |rank, seq| {
            assert_eq!(u64::from(rank - 10) + 100, seq);
            pieces.get((rank - 10) as usize)
        })
    }

    #[test]
    fn an_all_gather_hands_every_member_each_member_s_input() {
        let ins = [vec![1], vec![2], vec![3]];
        let all = vec![1, 2, 3];
        let outs = [all.clone(), all.clone(), all];
        assert!(matches!(
            checked("c10d::allgather_", &ins, &outs),
            PieceCheck::Equal
        ));
        let corrupt = [vec![1, 2, 3], vec![1, 9, 3], vec![1, 2, 3]];
        let PieceCheck::Differ(found) = checked("c10d::allgather_", &ins, &corrupt) else {
            panic!("rank 11's piece from rank 11 is corrupt");
        };
        assert_eq!((found.what.as_str(), found.index), ("pieces", 4));
        let ranks: Vec<(u32, Option<u64>)> =
            found.ranks.iter().map(|r| (r.rank, r.launch)).collect();
        assert_eq!(ranks, [(11, Some(101)), (11, Some(101))]);
        assert_eq!(found.ranks[1].value, format!("got {:#018x}", 9));
    }

    #[test]
    fn an_all_to_all_hands_member_j_s_piece_for_this_member() {
        // Member i puts in 10 * i + j for member j.
        let ins: Vec<Vec<u64>> = (0..3)
            .map(|i| (0..3).map(|j| 10 * i + j).collect())
            .collect();
        let outs: Vec<Vec<u64>> = (0..3)
            .map(|j| (0..3).map(|i| 10 * i + j).collect())
            .collect();
        assert!(matches!(
            checked("c10d::alltoall_", &ins, &outs),
            PieceCheck::Equal
        ));
        // The all-gather's rule does not hold for it.
        assert!(matches!(
            checked("c10d::allgather_", &ins, &outs),
            PieceCheck::Differ(_)
        ));
        assert!(matches!(
            checked("c10d::allreduce_", &ins, &outs),
            PieceCheck::Skipped
        ));
    }
}

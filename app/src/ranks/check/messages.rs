//! Point-to-point transfers checked across ranks: the k-th send from
//! rank A to rank B with a tag, on a group, is the k-th receive on B from
//! A with that tag (c10d matches them in that order), so each pair must
//! move tensors of the same shapes, and what the receiver holds once the
//! receive completes must hash as what the sender read.

use super::collectives::{End, Message, Outcome, RankCollectives};
use super::findings::{Finding, RankValue, keep_earliest};
use std::collections::BTreeMap;

/// Where a transfer goes: its group, sender and receiver (global ranks)
/// and tag.
type Channel<'r> = (&'r str, u32, u32, i64);

/// What pairing the ranks' sends and receives found.
#[derive(Debug, Default)]
pub(super) struct Paired {
    /// Transfers (a send, its receive, or both).
    pub messages: usize,
    /// Of them, those whose two ends' hashes were compared.
    pub compared: usize,
    /// The first transfer missing an end or moving other shapes, with
    /// when it happened.
    pub sequence: Option<(u64, Finding)>,
    /// The first transfer whose receiver holds other bytes than its
    /// sender read, with when it happened.
    pub results: Option<(u64, Finding)>,
}

/// One end of a transfer as a rank recorded it.
#[derive(Debug, Clone, Copy)]
struct Side<'r> {
    message: &'r Message,
    op: &'r str,
    shapes: &'r str,
}

/// Pairs every rank's sends with their receives, channel by channel.
pub(super) fn pair(by_rank: &BTreeMap<u32, RankCollectives>) -> Paired {
    let mut channels: BTreeMap<Channel<'_>, [Vec<Side<'_>>; 2]> = BTreeMap::new();
    for (&rank, collectives) in by_rank {
        for message in &collectives.messages {
            let group = &collectives.groups[message.group as usize];
            let kind = &collectives.kinds[message.kind as usize];
            // A peer is named by its rank in the group: its global rank is
            // the group's member there (the same in the default group).
            let Some(peer) = message.peer.and_then(|p| {
                let p = u32::try_from(p).ok()?;
                match &group.members {
                    Some(members) => members.get(p as usize).copied(),
                    None => Some(p),
                }
            }) else {
                continue;
            };
            let side = Side {
                message,
                op: &kind.op,
                shapes: &kind.shapes,
            };
            let (from, to, end) = match message.end {
                End::Send => (rank, peer, 0),
                End::Receive => (peer, rank, 1),
            };
            channels
                .entry((group.name.as_str(), from, to, message.tag))
                .or_default()[end]
                .push(side);
        }
    }
    let mut paired = Paired::default();
    for ((group, from, to, _), [sends, receives]) in &channels {
        // A rank whose trace is not in the run cannot be paired with.
        if !by_rank.contains_key(from) || !by_rank.contains_key(to) {
            continue;
        }
        for index in 0..sends.len().max(receives.len()) {
            paired.messages += 1;
            let ends = [sends.get(index), receives.get(index)];
            let when = ends
                .iter()
                .flatten()
                .map(|side| side.message.at_ns)
                .min()
                .unwrap_or(u64::MAX);
            let finding = |what: &str, value: &dyn Fn(&Side<'_>) -> String| Finding {
                group: (*group).to_owned(),
                index,
                op: "c10d::send".into(),
                what: what.to_owned(),
                ranks: [*from, *to]
                    .iter()
                    .zip(ends)
                    .map(|(&rank, side)| RankValue {
                        rank,
                        launch: side.map(|s| s.message.seq),
                        value: side.map_or_else(|| "none".to_owned(), value),
                    })
                    .collect(),
            };
            let [Some(send), Some(receive)] = ends else {
                let found = finding("missing", &|side| side.op.to_owned());
                keep_earliest(&mut paired.sequence, when, found);
                break; // past a missing end the channel's ends no longer pair up
            };
            if send.shapes != receive.shapes {
                let found = finding("shapes", &|side| side.shapes.to_owned());
                keep_earliest(&mut paired.sequence, when, found);
                break;
            }
            if let (Outcome::Hash(sent), Outcome::Hash(received)) =
                (send.message.outcome, receive.message.outcome)
            {
                paired.compared += 1;
                if sent != received {
                    let found = finding("results", &|side| match side.message.outcome {
                        Outcome::Hash(h) => format!("{h:#018x}"),
                        _ => "-".into(),
                    });
                    keep_earliest(&mut paired.results, when, found);
                }
            }
        }
    }
    paired
}

#[cfg(test)]
mod tests {
    use super::super::collectives::{Group, Kind};
    use super::*;

    /// Rank `rank` sends to (or receives from) `peer` a float32[4] whose
    /// hash is `hash`.
    fn add(ranks: &mut BTreeMap<u32, RankCollectives>, rank: u32, end: End, peer: i64, hash: u64) {
        let collectives = ranks.entry(rank).or_default();
        let group = collectives.group_id(Group {
            name: "0".into(),
            backend: Some("gloo".into()),
            members: None,
        });
        let op = if end == End::Send {
            "c10d::send"
        } else {
            "c10d::recv_"
        };
        let kind = collectives.kind_id(Kind {
            op: op.into(),
            shapes: "float32[4]".into(),
            ..Kind::default()
        });
        let seq = collectives.messages.len() as u64;
        collectives.messages.push(Message {
            seq,
            at_ns: seq * 1000,
            group,
            kind,
            end,
            peer: Some(peer),
            tag: 0,
            outcome: Outcome::Hash(hash),
        });
    }

    #[test]
    fn each_send_pairs_with_its_receive_and_a_changed_transfer_is_found() {
        let mut ranks = BTreeMap::new();
        add(&mut ranks, 0, End::Send, 1, 5);
        add(&mut ranks, 1, End::Receive, 0, 5);
        add(&mut ranks, 1, End::Send, 0, 6);
        add(&mut ranks, 0, End::Receive, 1, 6);
        let paired = pair(&ranks);
        assert_eq!((paired.messages, paired.compared), (2, 2));
        assert!(paired.sequence.is_none() && paired.results.is_none());
        // Rank 0's second send arrives changed on rank 1.
        add(&mut ranks, 0, End::Send, 1, 7);
        add(&mut ranks, 1, End::Receive, 0, 8);
        let (_, found) = pair(&ranks).results.expect("a changed transfer");
        assert_eq!((found.what.as_str(), found.index), ("results", 1));
        assert_eq!(
            found.ranks.iter().map(|r| r.rank).collect::<Vec<_>>(),
            [0, 1]
        );
        assert_eq!(found.ranks[1].value, format!("{:#018x}", 8));
    }

    #[test]
    fn a_send_never_received_is_missing() {
        let mut ranks = BTreeMap::new();
        add(&mut ranks, 0, End::Send, 1, 5);
        ranks.entry(1).or_default();
        let (_, found) = pair(&ranks).sequence.expect("missing");
        assert_eq!(found.what, "missing");
        assert_eq!(found.ranks[1].launch, None);
        assert_eq!(found.ranks[1].value, "none");
    }
}

//! What the check of a run's ranks finds, shared by the modules that
//! look (collectives in sequence, their results, list pieces, messages)
//! and the summary that says it.

use super::collectives::{Call, Kind};
use serde::Serialize;

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
    /// All-gathers and all-to-alls of tensor lists (one per group
    /// position) whose every output piece was compared with the input it
    /// came from.
    pub pieces_compared: usize,
    /// Point-to-point transfers: sends paired with their receives (one
    /// end alone counts too).
    pub messages: usize,
    /// Transfers whose two ends' hashes were compared.
    pub messages_compared: usize,
    /// The first collective whose ranks disagree on what ran (op, reduce
    /// op, root, shapes, or a member that never ran it), or the first
    /// transfer missing an end or moving other shapes; null when none.
    pub first_sequence_mismatch: Option<Finding>,
    /// The first collective whose result differs between members that
    /// should hold the same bytes, or the first transfer received other
    /// than it was sent; null when none.
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

/// One member's call at a position of its group.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ran<'c> {
    pub(super) call: &'c Call,
    pub(super) kind: &'c Kind,
}

/// Keeps in `slot` the finding found at the earliest `when`.
pub(super) fn keep_earliest(slot: &mut Option<(u64, Finding)>, when: u64, finding: Finding) {
    if slot.as_ref().is_none_or(|(at, _)| when < *at) {
        *slot = Some((when, finding));
    }
}

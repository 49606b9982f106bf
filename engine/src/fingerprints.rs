//! Two runs' fingerprints compared in order (traces recorded with
//! `fingerprint`): each compiled graph call's outputs, each host read and
//! collective, and the state at each step's end, hashed. The first that
//! differs names the step where the runs part; the launches of that step
//! are then recorded in full (`check --steps`).

use crate::Sides;
use serde::Serialize;
use tritontui_trace::{ArgRef, Trace};

/// Two runs' fingerprints compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FingerprintComparison {
    /// How many fingerprints each run recorded.
    pub counts: Sides<usize>,
    /// How many steps each run's fingerprints cover (its last recorded
    /// step end, plus one), when its steps are known.
    pub steps: Sides<Option<u64>>,
    /// Where they first differ, if they do.
    pub first_difference: Option<FingerprintDifference>,
}

/// The first fingerprint two runs recorded differently.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FingerprintDifference {
    /// The fingerprint in each run (an index into its launches); None in
    /// the run whose fingerprints ended before.
    pub launches: Sides<Option<usize>>,
    /// The step it was recorded in, when steps are known.
    pub step: Option<u64>,
    /// Which fingerprint of its step it is, from 0.
    pub in_step: usize,
    /// How it differs.
    pub what: Parted,
}

/// How two runs' fingerprints at one place differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Parted {
    /// They are of different calls (another graph, op or shapes): the
    /// runs took different paths.
    Calls,
    /// The same call hashed differently: these arguments (indices).
    Values {
        /// The arguments whose hashes differ.
        args: Vec<usize>,
    },
    /// One run recorded no more fingerprints (it stopped, or ran fewer
    /// steps).
    Ended,
}

impl FingerprintComparison {
    /// Compares the fingerprints of runs `a` and `b`, in order; None when
    /// neither has any.
    pub fn of(a: &Trace, b: &Trace) -> Option<FingerprintComparison> {
        let lists = Sides {
            a: a.fingerprints().map(|(i, _)| i).collect::<Vec<_>>(),
            b: b.fingerprints().map(|(i, _)| i).collect::<Vec<_>>(),
        };
        if lists.a.is_empty() && lists.b.is_empty() {
            return None;
        }
        let longest = lists.a.len().max(lists.b.len());
        let first_difference = (0..longest).find_map(|k| {
            let at = Sides {
                a: lists.a.get(k).copied(),
                b: lists.b.get(k).copied(),
            };
            let what = match (at.a, at.b) {
                (Some(x), Some(y)) => parted(a, x, b, y)?,
                _ => Parted::Ended,
            };
            let (trace, list, i) = match at.a {
                Some(i) => (a, &lists.a, i),
                None => (b, &lists.b, at.b.unwrap_or_default()),
            };
            let step = trace.steps.of(i);
            let in_step = list[..k]
                .iter()
                .rev()
                .take_while(|&&j| trace.steps.of(j) == step)
                .count();
            Some(FingerprintDifference {
                launches: at,
                step,
                in_step,
                what,
            })
        });
        Some(FingerprintComparison {
            counts: lists.map(Vec::len),
            steps: Sides {
                a: a.steps.fingerprinted_steps(),
                b: b.steps.fingerprinted_steps(),
            },
            first_difference,
        })
    }
}

/// How launch `x` of `a` and launch `y` of `b` differ, if they do.
fn parted(a: &Trace, x: usize, b: &Trace, y: usize) -> Option<Parted> {
    let (lx, ly) = (&a.launches[x], &b.launches[y]);
    if a.kernel_of(lx).name != b.kernel_of(ly).name || a.args_of(lx).len() != b.args_of(ly).len() {
        return Some(Parted::Calls);
    }
    let mut args = Vec::new();
    for (k, (p, q)) in a.args_of(lx).zip(b.args_of(ly)).enumerate() {
        match (p, q) {
            (ArgRef::Tensor(p), ArgRef::Tensor(q)) => {
                if p.layout.dtype != q.layout.dtype || p.layout.shape != q.layout.shape {
                    return Some(Parted::Calls);
                }
                let differ = |x: Option<u64>, y: Option<u64>| x.zip(y).is_some_and(|(x, y)| x != y);
                if differ(p.pre, q.pre) || differ(p.post, q.post) {
                    args.push(k);
                }
            }
            (ArgRef::Scalar(p), ArgRef::Scalar(q)) => {
                if !p.same_bits(q) {
                    args.push(k);
                }
            }
            _ => return Some(Parted::Calls),
        }
    }
    (!args.is_empty()).then_some(Parted::Values { args })
}

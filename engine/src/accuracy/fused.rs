//! What two compiled kernels that wrote one aligned point compute
//! differently: the aten ops, module by module, that one kernel fuses and
//! the other does not (from the `kernel_site` records of their compiles).
//! A coarse rounding planted in one module shows as that module's
//! `aten.round` in one run's kernel only.

use crate::TracePair;
use serde::Serialize;
use std::collections::BTreeSet;

/// An aten op a kernel computes, with the module it was traced in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct FusedOp {
    /// The module path (empty for the outermost module).
    pub module: String,
    /// The op, as Inductor names it (`aten.round`).
    pub op: String,
}

/// The ops only run A's launch `a` computes and those only run B's launch
/// `b` computes, in each graph's order; both empty where either launch's
/// compile is not in its trace (an eager op, or a graph compiled before
/// recording) or they compute the same.
pub fn ops_only(runs: TracePair<'_>, a: usize, b: usize) -> (Vec<FusedOp>, Vec<FusedOp>) {
    let (ops_a, ops_b) = (runs.a.fused_ops(a), runs.b.fused_ops(b));
    if ops_a.is_empty() || ops_b.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let less = |mine: &[(&str, &str)], theirs: &[(&str, &str)]| {
        let theirs: BTreeSet<&(&str, &str)> = theirs.iter().collect();
        mine.iter()
            .filter(|pair| !theirs.contains(pair))
            .map(|(module, op)| FusedOp {
                module: (*module).to_owned(),
                op: (*op).to_owned(),
            })
            .collect()
    };
    (less(&ops_a, &ops_b), less(&ops_b, &ops_a))
}

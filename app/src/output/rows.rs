//! Which rows of an argument differ, as the `diff` report says it.

use serde::Serialize;

/// The rows of one argument that differ after a launch.
#[derive(Debug, Clone, Serialize)]
pub struct RowsReport {
    /// The argument.
    pub arg: String,
    /// Its rows (the extent of its first dimension; for a batch-variant
    /// launch, the request's rows in it, 0 for a tensor compared whole).
    pub rows: u64,
    /// The indices of those that differ.
    pub differing: Vec<u64>,
}

//! Which rows of a tensor differ between two runs, from the row hashes of
//! traces recorded with `rows` (one hash per index of its first
//! dimension).

use tritontui_trace::{ArgRef, Trace};

/// The indices of the rows whose hashes differ; None unless both runs
/// hold the same number of row hashes.
pub fn differing(a: Option<&[u64]>, b: Option<&[u64]>) -> Option<Vec<u64>> {
    let (a, b) = (a?, b?);
    (a.len() == b.len()).then(|| {
        (0..a.len())
            .filter(|&i| a[i] != b[i])
            .map(|i| i as u64)
            .collect()
    })
}

/// The rows of argument `arg` of launch `ia` of run `a` and launch `ib` of
/// run `b` that differ after them, with the tensor's row count; None
/// where a trace holds no row hashes of it, or their counts differ.
pub fn differing_after(
    a: &Trace,
    ia: u32,
    b: &Trace,
    ib: u32,
    arg: usize,
) -> Option<(u64, Vec<u64>)> {
    let (x, y) = (rows_after(a, ia, arg)?, rows_after(b, ib, arg)?);
    Some((x.len() as u64, differing(Some(x), Some(y))?))
}

/// The row hashes of argument `arg` of launch `index` after it.
fn rows_after(trace: &Trace, index: u32, arg: usize) -> Option<&[u64]> {
    match trace.args_of(&trace.launches[index as usize]).nth(arg)? {
        ArgRef::Tensor(t) => t.rows,
        ArgRef::Scalar(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::differing;

    #[test]
    fn rows_differ_where_their_hashes_do() {
        assert_eq!(differing(Some(&[1, 2, 3]), Some(&[1, 5, 3])), Some(vec![1]));
        assert_eq!(differing(Some(&[1, 2]), Some(&[1, 2])), Some(vec![]));
        assert_eq!(differing(Some(&[1, 2]), Some(&[1])), None);
        assert_eq!(differing(None, Some(&[1])), None);
    }
}

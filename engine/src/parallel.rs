//! Two pieces of work side by side: one on a scoped thread, the other on
//! the calling thread (both runs of a comparison, two halves of a list).

/// Runs `left` on a scoped thread and `right` on this one: `left`'s
/// result (or the payload of its panic) and `right`'s.
pub fn side_by_side<A: Send, B>(
    left: impl FnOnce() -> A + Send,
    right: impl FnOnce() -> B,
) -> (std::thread::Result<A>, B) {
    std::thread::scope(|s| {
        let handle = s.spawn(left);
        let right = right();
        (handle.join(), right)
    })
}

/// Runs `left` on a scoped thread and `right` on this one, re-raising a
/// panic of `left` here.
pub fn both<A: Send, B>(left: impl FnOnce() -> A + Send, right: impl FnOnce() -> B) -> (A, B) {
    let (left, right) = side_by_side(left, right);
    (
        left.unwrap_or_else(|payload| std::panic::resume_unwind(payload)),
        right,
    )
}

#[cfg(test)]
mod tests {
    use super::{both, side_by_side};

    #[test]
    fn both_results_come_back_and_a_panic_on_the_thread_is_caught_or_raised() {
        assert_eq!(both(|| 1 + 1, || "two"), (2, "two"));
        let (left, right) = side_by_side(|| -> u32 { std::panic::panic_any("lost") }, || 3);
        assert!(left.is_err());
        assert_eq!(right, 3);
        let raised =
            std::panic::catch_unwind(|| both(|| -> u32 { std::panic::panic_any("x") }, || 0));
        assert!(raised.is_err());
    }
}

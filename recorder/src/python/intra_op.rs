//! Torch's intra-op threads (`at::parallel_for`) for the recorder's own
//! host work, reached through the observer library once it is loaded
//! (`aten_observer` offers its entry point here; `host` asks for it).

use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

/// Torch's `at::parallel_for`: `(count, grain, body, context) -> 0`, or
/// -1 when not every piece ran; `body(context, begin, end)` runs a piece.
pub(crate) type ParallelForFn = unsafe extern "C" fn(
    i64,
    i64,
    unsafe extern "C" fn(*mut c_void, i64, i64),
    *mut c_void,
) -> c_int;

/// The observer library's `at::parallel_for`, once it is loaded.
static PARALLEL_FOR: OnceLock<ParallelForFn> = OnceLock::new();

/// Makes `parallel_for` (the loaded observer library's) the one
/// [`parallel_for`] returns.
pub(crate) fn offer(parallel_for: ParallelForFn) {
    // A library is loaded once a process: a second offer is the same.
    let _ = PARALLEL_FOR.set(parallel_for);
}

/// Torch's `at::parallel_for`, once the observer library is loaded (by
/// the first recording that asked for it), else None.
pub(crate) fn parallel_for() -> Option<ParallelForFn> {
    PARALLEL_FOR.get().copied()
}

//! Where a paused process waits for its resume file or a debugger.

use pyo3::prelude::*;
use std::time::Instant;

/// How a wait in [`tritontui_paused`] ended.
const STILL_PAUSED: u32 = 0;
const RESUME_FILE_GONE: u32 = 1;
const DEBUGGER_ATTACHED: u32 = 2;

/// Where a paused process waits, named so that a debugger's backtrace
/// says so: for up to `millis` milliseconds, until the resume file at
/// `path` (`len` bytes of UTF-8) is removed or a debugger is attached (and,
/// since this runs, has let the process go). Every check happens in here,
/// so a debugger attaching at any moment finds the process in this frame.
///
/// # Safety
/// `path` must point at `len` readable bytes.
#[unsafe(no_mangle)]
#[inline(never)]
pub unsafe extern "C" fn tritontui_paused(millis: u64, path: *const u8, len: usize) -> u32 {
    // SAFETY: guaranteed by the caller.
    let bytes = unsafe { std::slice::from_raw_parts(path, len) };
    let resume_file = std::path::Path::new(std::str::from_utf8(bytes).unwrap_or_default());
    let step = std::time::Duration::from_millis(10);
    let deadline = Instant::now() + std::time::Duration::from_millis(millis);
    loop {
        if !resume_file.exists() {
            return RESUME_FILE_GONE;
        }
        if crate::procs::traced() {
            return DEBUGGER_ATTACHED;
        }
        let now = Instant::now();
        if now >= deadline {
            return STILL_PAUSED;
        }
        std::thread::sleep(step.min(deadline - now));
    }
}

/// One turn of a paused process's wait, with the GIL released: `"file"`
/// once `resume_file` is gone, `"debugger"` once a debugger has attached
/// and let the process go, None after `millis` milliseconds.
#[pyfunction]
pub(super) fn pause_tick(py: Python<'_>, millis: u64, resume_file: &str) -> Option<&'static str> {
    let ended = py.detach(|| {
        // SAFETY: the bytes of a live str.
        unsafe { tritontui_paused(millis, resume_file.as_ptr(), resume_file.len()) }
    });
    match ended {
        RESUME_FILE_GONE => Some("file"),
        DEBUGGER_ATTACHED => Some("debugger"),
        _ => None,
    }
}

//! What the recorder knows about the calling thread: whether it is inside
//! a recorded launch (whatever torch does there belongs to that launch and
//! is not recorded again), whether it runs a compiler's autotuning (its
//! launches are not the program's), and its id as the OS knows it.

use std::cell::Cell;

thread_local! {
    /// Recorded launches running on this thread.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Autotuning blocks running on this thread.
    static AUTOTUNING: Cell<u32> = const { Cell::new(0) };
    /// This thread's id as the OS knows it, asked once.
    static THREAD_ID: u64 = native_thread_id();
}

/// Whether this thread is inside a recorded launch.
pub fn in_launch() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// Counts this thread in a recorded launch while alive.
pub struct Inside;

impl Inside {
    /// Marks the thread as inside a recorded launch until dropped.
    pub fn enter() -> Inside {
        enter_launch();
        Inside
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        leave_launch();
    }
}

/// Counts this thread into one more recorded launch.
pub fn enter_launch() {
    DEPTH.with(|d| d.set(d.get() + 1));
}

/// Counts this thread out of the innermost recorded launch.
pub fn leave_launch() {
    DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
}

/// Whether this thread runs a compiler's autotuning: its launches are
/// recorded as autotuning launches, not the program's.
pub fn autotuning() -> bool {
    AUTOTUNING.with(|d| d.get() > 0)
}

/// Counts this thread into one more autotuning block.
pub fn enter_autotuning() {
    AUTOTUNING.with(|d| d.set(d.get() + 1));
}

/// Counts this thread out of its innermost autotuning block.
pub fn leave_autotuning() {
    AUTOTUNING.with(|d| d.set(d.get().saturating_sub(1)));
}

/// The calling thread's id (`threading.get_native_id`), cached per thread.
pub fn thread_id() -> u64 {
    THREAD_ID.with(|id| *id)
}

fn native_thread_id() -> u64 {
    // SAFETY: gettid has no preconditions.
    (unsafe { libc_gettid() }) as u64
}

unsafe extern "C" {
    #[link_name = "gettid"]
    fn libc_gettid() -> i32;
}

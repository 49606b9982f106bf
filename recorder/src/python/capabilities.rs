//! What the native half can do in this process: fast tensor reads, and
//! whether a launch is being recorded on this thread or an autotuning
//! block runs on it.

use super::guard::guard;
use pyo3::prelude::*;

/// Whether launch arguments are read straight from torch's `TensorImpl`
/// (probed and never contradicted), rather than through their attributes.
#[pyfunction]
pub(super) fn fast_tensor_reads(py: Python<'_>) -> bool {
    super::tensor_impl::active(py)
}

/// Finds where torch keeps each tensor field (once per process; call it
/// before recording starts, as it makes tensors). Whether that worked.
#[pyfunction]
pub(super) fn probe_tensor_impl(py: Python<'_>) -> PyResult<bool> {
    guard(|| super::describe::probe_tensor_impl(py))
}

/// Whether this thread is inside a recorded launch (or the recorder's own
/// work): torch ops and host reads in it are not recorded.
#[pyfunction]
pub(super) fn in_launch() -> bool {
    super::thread_state::in_launch()
}

/// Marks this thread as inside one more recorded launch.
#[pyfunction]
pub(super) fn enter_launch() {
    super::thread_state::enter_launch();
}

/// Marks this thread as out of its innermost recorded launch.
#[pyfunction]
pub(super) fn leave_launch() {
    super::thread_state::leave_launch();
}

/// Marks this thread as running a compiler's autotuning: the launches it
/// makes until [`leave_autotuning`] are recorded as autotuning launches.
#[pyfunction]
pub(super) fn enter_autotuning() {
    super::thread_state::enter_autotuning();
}

/// Marks this thread as out of its innermost autotuning block.
#[pyfunction]
pub(super) fn leave_autotuning() {
    super::thread_state::leave_autotuning();
}

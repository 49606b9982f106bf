//! The recorder's phase timers (`crate::phases`) for Python benchmarks.

use crate::phases;
use pyo3::prelude::*;

/// Turns the phase timers on or off, clearing their totals.
#[pyfunction]
pub fn time_phases(enabled: bool) {
    phases::set_enabled(enabled);
}

/// `(phase, nanoseconds, times entered)` of each phase since the timers
/// were turned on.
#[pyfunction]
pub fn phase_times() -> Vec<(&'static str, u64, u64)> {
    phases::totals()
}

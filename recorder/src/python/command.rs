//! The `tritontui` command inside the extension: the package's console
//! script and `python -m tritontui` run the app's command line here, so one
//! `pip install` gives the whole tool.

use pyo3::prelude::*;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs the `tritontui` command line `argv` (the program name first) with
/// the GIL released; returns its exit status (2 on an internal error).
#[pyfunction]
pub(super) fn run_command(py: Python<'_>, argv: Vec<std::ffi::OsString>) -> u8 {
    py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| tritontui::commands::run(argv))).unwrap_or_else(|_| {
            eprintln!("tritontui: internal error (panic)");
            2
        })
    })
}

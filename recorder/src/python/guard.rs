//! How native calls fail: a panic or an I/O error becomes a Python
//! `RuntimeError`, never a crash of the recorded program.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `f`, turning a panic into a `RuntimeError`.
pub(super) fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(PyRuntimeError::new_err("tritontui: internal error (panic)")))
}

pub(super) fn io_error(e: std::io::Error) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

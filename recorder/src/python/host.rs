//! Hashes and summary statistics of host (CPU) tensor views, read in
//! place with the GIL released.

use super::guard::guard;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use tritontui_trace::hash::{View, hash_view};

/// `(min, max, mean_abs, nan, inf)` as Python sees it.
type StatsTuple = (f64, f64, f64, u64, u64);

/// The bytes of a strided view at `ptr`.
///
/// # Safety
/// `ptr` must point at the first element of live, readable host memory
/// covering the view's extent for as long as the returned slice is used.
pub(crate) unsafe fn view_memory<'a>(ptr: usize, view: &View<'_>) -> &'a [u8] {
    let extent = view.extent();
    if extent == 0 || ptr == 0 {
        return &[];
    }
    // SAFETY: guaranteed by the caller.
    unsafe { std::slice::from_raw_parts(ptr as *const u8, extent) }
}

/// Runs `f` on the bytes of a host view, with the GIL released.
///
/// # Safety
/// As [`view_memory`].
unsafe fn with_host_view<T: Send>(
    py: Python<'_>,
    ptr: usize,
    itemsize: usize,
    shape: &[usize],
    stride: &[usize],
    f: impl FnOnce(&[u8], &View<'_>) -> T + Send,
) -> PyResult<T> {
    if itemsize == 0 || shape.len() != stride.len() {
        return Err(PyValueError::new_err(
            "itemsize must be positive and shape and stride the same length",
        ));
    }
    py.detach(|| {
        guard(|| {
            let view = View {
                itemsize,
                shape,
                stride,
            };
            // SAFETY: guaranteed by the caller.
            let memory = unsafe { view_memory(ptr, &view) };
            Ok(f(memory, &view))
        })
    })
}

/// `tthash64-v1` of the logical bytes of a host tensor view.
///
/// The caller (tritontui's own Python code) passes `tensor.data_ptr()` of
/// a live, dense, strided CPU tensor that it keeps alive during the call.
#[pyfunction]
pub(super) fn hash_host(
    py: Python<'_>,
    ptr: usize,
    itemsize: usize,
    shape: Vec<usize>,
    stride: Vec<usize>,
) -> PyResult<u64> {
    // SAFETY: see the function's contract.
    unsafe { with_host_view(py, ptr, itemsize, &shape, &stride, hash_view) }
}

/// `tthash64-v1` of a bytes object (for tests and other languages' checks).
#[pyfunction]
pub(super) fn hash_bytes(data: &[u8]) -> u64 {
    tritontui_trace::hash::hash_bytes(data)
}

/// Summary statistics of a floating host tensor view, or None for other
/// dtypes. Same contract as `hash_host`.
#[pyfunction]
pub(super) fn stats_host(
    py: Python<'_>,
    ptr: usize,
    dtype: &str,
    itemsize: usize,
    shape: Vec<usize>,
    stride: Vec<usize>,
) -> PyResult<Option<StatsTuple>> {
    // SAFETY: see `hash_host`.
    unsafe {
        with_host_view(py, ptr, itemsize, &shape, &stride, |memory, view| {
            crate::stats::stats(memory, view, dtype)
                .map(|s| (s.min, s.max, s.mean_abs, s.nan, s.inf))
        })
    }
}

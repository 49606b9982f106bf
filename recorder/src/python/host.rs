//! Hashes and summary statistics of host (CPU) tensor views, read in
//! place with the GIL released; a large contiguous one hashed on torch's
//! intra-op threads.

use super::guard::guard;
use super::intra_op::parallel_for;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use tritontui_trace::hash::{Sum, View, hash_view};

/// Bytes from which a contiguous view is hashed in pieces on torch's
/// intra-op threads: below, waking them costs more than it saves.
const PARALLEL_FROM: usize = 256 << 10;
/// Words of the smallest piece.
const PIECE_WORDS: i64 = (128 << 10) / 8;

/// `hash_view`, on as many of torch's intra-op threads as
/// `torch.get_num_threads()` allows when the view is contiguous and large
/// and the observer library (which reaches them) is loaded. The words'
/// sums add up in any order, so the hash is the same however it is split.
pub(crate) fn hash_host_view(memory: &[u8], view: &View<'_>) -> u64 {
    let bytes = view.numel() * view.itemsize;
    if bytes < PARALLEL_FROM || !view.is_contiguous() {
        return hash_view(memory, view);
    }
    let Some(parallel_for) = parallel_for() else {
        return hash_view(memory, view);
    };
    let pieces = Pieces {
        bytes: &memory[..bytes],
        sum: Mutex::new(Sum::default()),
        failed: AtomicBool::new(false),
    };
    let words = bytes.div_ceil(8) as i64;
    // SAFETY: `add_piece` is called with `pieces` only, which outlives the
    // call; it catches its own panics.
    let ran = unsafe {
        parallel_for(
            words,
            PIECE_WORDS,
            add_piece,
            &pieces as *const Pieces<'_> as *mut c_void,
        )
    };
    let sum = pieces.sum.into_inner();
    match sum {
        Ok(sum) if ran == 0 && !pieces.failed.load(Ordering::Acquire) => sum.finish(bytes as u64),
        // Some piece did not run or add up: hashed again, whole, here.
        _ => hash_view(memory, view),
    }
}

/// The bytes a parallel hash splits, and the sum of the pieces so far.
struct Pieces<'a> {
    bytes: &'a [u8],
    sum: Mutex<Sum>,
    failed: AtomicBool,
}

/// Adds words `begin..end` of `context` (a [`Pieces`]) to its sum.
///
/// # Safety
/// `context` points at a live `Pieces`.
unsafe extern "C" fn add_piece(context: *mut c_void, begin: i64, end: i64) {
    // SAFETY: guaranteed by the caller.
    let pieces = unsafe { &*(context as *const Pieces<'_>) };
    let added = catch_unwind(AssertUnwindSafe(|| {
        let len = pieces.bytes.len();
        let from = (begin as usize * 8).min(len);
        let to = (end as usize * 8).min(len);
        let mut piece = Sum::default();
        piece.add(begin as u64, &pieces.bytes[from..to]);
        pieces.sum.lock().map(|mut sum| sum.merge(piece)).is_ok()
    }));
    if !matches!(added, Ok(true)) {
        pieces.failed.store(true, Ordering::Release);
    }
}

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
    unsafe { with_host_view(py, ptr, itemsize, &shape, &stride, hash_host_view) }
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

//! `GpuBatch`: the hashes (and summaries) of one launch's CUDA tensors,
//! enqueued on its stream.

use super::guard::guard;
use crate::background::Delivered;
use crate::stats::Summary;
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// The hashes of one launch's CUDA tensors, enqueued on its stream.
#[pyclass(module = "tritontui._native")]
pub(super) struct GpuBatch {
    #[cfg(feature = "cuda")]
    batch: Option<crate::gpu::Batch>,
}

#[pymethods]
impl GpuBatch {
    /// Reserves result slots on device `ordinal` and zeroes them on `stream`
    /// (a raw cudaStream_t). Raises RuntimeError when the GPU cannot hash.
    #[new]
    fn new(ordinal: i32, stream: u64) -> PyResult<Self> {
        guard(|| {
            #[cfg(feature = "cuda")]
            {
                let batch = crate::gpu::Batch::begin(ordinal, stream)
                    .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
                Ok(GpuBatch { batch: Some(batch) })
            }
            #[cfg(not(feature = "cuda"))]
            {
                let _ = (ordinal, stream);
                Err(PyRuntimeError::new_err("built without CUDA support"))
            }
        })
    }

    /// Waits for the batch and returns its results in order: an int per
    /// hash, a `(min, max, mean_abs, nan, inf)` tuple per summary, a list
    /// of floats per set of samples.
    fn wait<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.wait_here(py)?
            .into_iter()
            .map(|r| match r {
                Delivered::Hash(h) => h.into_bound_py_any(py),
                Delivered::Stats(s) => {
                    (s.min, s.max, s.mean_abs, s.nan, s.inf).into_bound_py_any(py)
                }
                Delivered::Samples(values) => values.into_bound_py_any(py),
                Delivered::Slot(_) => Err(PyRuntimeError::new_err(
                    "a batch hashed into a CUDA graph has no results until it is replayed",
                )),
            })
            .collect()
    }

    /// Enqueues the summary statistics of a float32, float16 or bfloat16
    /// CUDA tensor view; None for another dtype or when the batch is full.
    fn stats(
        &mut self,
        ptr: u64,
        dtype: &str,
        shape: Vec<u64>,
        stride: Vec<u64>,
    ) -> PyResult<Option<usize>> {
        self.summarize(Summary::Stats, ptr, dtype, shape, stride)
    }

    /// Enqueues the samples (`tritontui_trace::samples`) of a float32,
    /// float16 or bfloat16 CUDA tensor view; None for another dtype or
    /// when the batch is full.
    fn samples(
        &mut self,
        ptr: u64,
        dtype: &str,
        shape: Vec<u64>,
        stride: Vec<u64>,
    ) -> PyResult<Option<usize>> {
        self.summarize(Summary::Samples, ptr, dtype, shape, stride)
    }

    /// Enqueues the hash of a CUDA tensor view; the caller keeps the tensor
    /// alive until its launch record is written. None when the batch is
    /// full (the hash is then not recorded).
    fn hash(
        &mut self,
        ptr: u64,
        itemsize: u64,
        shape: Vec<u64>,
        stride: Vec<u64>,
    ) -> PyResult<Option<usize>> {
        guard(|| {
            #[cfg(feature = "cuda")]
            {
                let batch = self
                    .batch
                    .as_mut()
                    .ok_or_else(|| PyRuntimeError::new_err("the batch was used"))?;
                // SAFETY: tritontui passes `tensor.data_ptr()` of a live CUDA
                // tensor of this layout, on the batch's device.
                let index = unsafe { batch.hash(ptr, itemsize, &shape, &stride) }
                    .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
                Ok(index)
            }
            #[cfg(not(feature = "cuda"))]
            {
                let _ = (ptr, itemsize, shape, stride);
                Err(PyRuntimeError::new_err("built without CUDA support"))
            }
        })
    }
}

impl GpuBatch {
    /// Waits for the batch here and returns its hashes in order (for
    /// `tritontui.hash_tensor`; recording never waits).
    fn wait_here(&mut self, py: Python<'_>) -> PyResult<Vec<Delivered>> {
        let pending = self.take_pending()?;
        py.detach(|| guard(|| pending().map_err(PyRuntimeError::new_err)))
    }

    /// Enqueues the copy to the host and turns the batch into something the
    /// writer thread can wait for.
    fn take_pending(&mut self) -> PyResult<crate::background::Pending> {
        #[cfg(feature = "cuda")]
        {
            let batch = self
                .batch
                .take()
                .ok_or_else(|| PyRuntimeError::new_err("the batch was used"))?;
            let finished = batch
                .finish()
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            Ok(Box::new(move || finished.wait().map_err(|e| e.to_string())))
        }
        #[cfg(not(feature = "cuda"))]
        Err(PyRuntimeError::new_err("built without CUDA support"))
    }
}

/// Whether CUDA tensors can be hashed on the device here.
#[pyfunction]
pub(super) fn gpu_supported() -> bool {
    #[cfg(feature = "cuda")]
    {
        crate::gpu::driver_present()
    }
    #[cfg(not(feature = "cuda"))]
    false
}

/// Hash table launches this process has enqueued on its GPUs (0 without
/// CUDA support): what `TRITONTUI_DEFER_HASHES` saves, for benchmarks
/// and tests.
#[pyfunction]
pub(super) fn hash_table_launches() -> u64 {
    #[cfg(feature = "cuda")]
    {
        crate::gpu::TABLE_LAUNCHES.load(std::sync::atomic::Ordering::Relaxed)
    }
    #[cfg(not(feature = "cuda"))]
    0
}

/// Hash table launches this process has enqueued beside the launches of
/// CUDA graphs it captured (0 without CUDA support), for tests.
#[pyfunction]
pub(super) fn hash_table_launches_beside() -> u64 {
    #[cfg(feature = "cuda")]
    {
        crate::gpu::TABLE_LAUNCHES_BESIDE.load(std::sync::atomic::Ordering::Relaxed)
    }
    #[cfg(not(feature = "cuda"))]
    0
}

/// Graph calls whose input hashes this process ran beside the call's
/// launches (0 without CUDA support), for benchmarks and tests.
#[pyfunction]
pub(super) fn input_hash_forks() -> u64 {
    #[cfg(feature = "cuda")]
    {
        crate::recording::hashes::inputs_beside::INPUT_FORKS
            .load(std::sync::atomic::Ordering::Relaxed)
    }
    #[cfg(not(feature = "cuda"))]
    0
}

impl GpuBatch {
    /// Enqueues `summary` of a float32, float16 or bfloat16 view; None for
    /// another dtype or when the batch is full.
    fn summarize(
        &mut self,
        summary: Summary,
        ptr: u64,
        dtype: &str,
        shape: Vec<u64>,
        stride: Vec<u64>,
    ) -> PyResult<Option<usize>> {
        guard(|| {
            #[cfg(feature = "cuda")]
            {
                let Some(kind) = crate::gpu::StatsKind::of(dtype) else {
                    return Ok(None);
                };
                let batch = self
                    .batch
                    .as_mut()
                    .ok_or_else(|| PyRuntimeError::new_err("the batch was used"))?;
                // SAFETY: as for `hash`.
                let index = unsafe { batch.summarize(summary, ptr, kind, &shape, &stride) }
                    .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
                Ok(index)
            }
            #[cfg(not(feature = "cuda"))]
            {
                let _ = (summary, ptr, dtype, shape, stride);
                Err(PyRuntimeError::new_err("built without CUDA support"))
            }
        })
    }
}

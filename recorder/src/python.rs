//! The `tritontui._native` Python module: hashing, statistics and the
//! background trace writer. Python owns the hooks into torch; everything
//! here releases the GIL for the heavy work, and no panic crosses into
//! Python (it becomes a `RuntimeError`).

use crate::background::{BackgroundWriter, Delivered};
use crate::describe::{Described, Dtypes, Tables};
use tritontui_trace::format::{CallRecord, Header, KernelDef, LaunchRecord, Record, ResultsRecord, Scalar};
use tritontui_trace::hash::{View, hash_view};
use crate::procs::Watcher;
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::time::Instant;

/// `(min, max, mean_abs, nan, inf)` as Python sees it.
type StatsTuple = (f64, f64, f64, u64, u64);

/// The extension's own allocations (records, tables) come from mimalloc:
/// they are made on the recorded program's threads and freed on the writer
/// thread, and glibc's malloc serialises such frees on the allocating
/// arena's lock, which the program's next allocation then waits for.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Runs `f`, turning a panic into a `RuntimeError`.
fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(PyRuntimeError::new_err("tritontui: internal error (panic)")))
}

fn io_error(e: std::io::Error) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

/// The bytes of a strided view at `ptr`.
///
/// # Safety
/// `ptr` must point at the first element of live, readable host memory
/// covering the view's span for as long as the returned slice is used.
pub(crate) unsafe fn view_memory<'a>(ptr: usize, view: &View<'_>) -> &'a [u8] {
    let span = view.span();
    if span == 0 || ptr == 0 {
        return &[];
    }
    // SAFETY: guaranteed by the caller.
    unsafe { std::slice::from_raw_parts(ptr as *const u8, span) }
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
fn hash_host(
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
fn hash_bytes(data: &[u8]) -> u64 {
    tritontui_trace::hash::hash_bytes(data)
}

/// Summary statistics of a floating host tensor view, or None for other
/// dtypes. Same contract as `hash_host`.
#[pyfunction]
fn stats_host(
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

/// Writes one trace file from a background thread.
#[pyclass(module = "tritontui._native")]
pub(crate) struct TraceFile {
    writer: Option<BackgroundWriter>,
    /// Keeps the process table current until the trace is closed.
    watcher: Option<Watcher>,
    dtypes: Dtypes,
    /// The sequence number of the next launch.
    next_seq: u64,
    /// When the session started: record times count from here.
    start: Instant,
}

impl TraceFile {
    fn writer(&mut self) -> PyResult<&mut BackgroundWriter> {
        self.writer
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("the trace is closed"))
    }

    /// Queues a record (a launch or a graph call, whose arguments
    /// `described` read) now, or once its device results are in.
    fn queue(&mut self, record: Record, described: &mut Described) -> PyResult<()> {
        let fills = std::mem::take(&mut described.fills);
        let pending = described.take_pending();
        let writer = self.writer()?;
        match pending {
            Some(pending) if !fills.is_empty() => writer.pending(record, fills, pending),
            _ => writer.record(record),
        }
        .map_err(io_error)
    }

    /// The writer and the dtype table, borrowed together.
    fn tables(&mut self) -> PyResult<Tables<'_>> {
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("the trace is closed"))?;
        Ok(Tables {
            writer,
            dtypes: &mut self.dtypes,
        })
    }
}

impl Drop for TraceFile {
    /// Without [`TraceFile::close`] (a session never stopped), the trace
    /// keeps what was sent and has no end record. The watcher goes first:
    /// it holds a sink into the writer's queue, which the writer thread
    /// drains until every sender is gone.
    fn drop(&mut self) {
        drop(self.watcher.take());
        drop(self.writer.take());
    }
}

/// A non-tensor argument as a trace scalar.
pub(crate) fn scalar(item: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    if item.is_none() {
        Ok(Scalar::None)
    } else if let Ok(b) = item.cast::<PyBool>() {
        Ok(Scalar::Bool(b.is_true()))
    } else if item.is_instance_of::<PyInt>() {
        match item.extract::<i64>() {
            Ok(v) => Ok(Scalar::Int(v)),
            Err(_) => Ok(item
                .extract::<u64>()
                .map(Scalar::UInt)
                .unwrap_or_else(|_| Scalar::Str(item.to_string()))),
        }
    } else if let Ok(f) = item.cast::<PyFloat>() {
        Ok(Scalar::Float(f.value()))
    } else if let Ok(s) = item.cast::<PyString>() {
        Ok(Scalar::Str(s.to_str()?.to_owned()))
    } else {
        // Any other host object is recorded by what determines results,
        // never by its identity (docs/trace-format.md, host objects).
        let value = HOST_VALUE
            .import(item.py(), "tritontui._host", "host_value")?
            .call1((item,))?;
        Ok(Scalar::Str(
            value.cast_into::<PyString>()?.to_str()?.to_owned(),
        ))
    }
}

/// `tritontui._host.host_value`, looked up once.
static HOST_VALUE: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();

/// The hashes of one launch's CUDA tensors, enqueued on its stream.
#[pyclass(module = "tritontui._native")]
struct GpuBatch {
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
    /// hash, a `(min, max, mean_abs, nan, inf)` tuple per summary.
    fn wait<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.wait_here(py)?
            .into_iter()
            .map(|r| match r {
                Delivered::Hash(h) => h.into_bound_py_any(py),
                Delivered::Stats(s) => {
                    (s.min, s.max, s.mean_abs, s.nan, s.inf).into_bound_py_any(py)
                }
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
                let index = unsafe { batch.stats(ptr, kind, &shape, &stride) }
                    .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
                Ok(index)
            }
            #[cfg(not(feature = "cuda"))]
            {
                let _ = (ptr, dtype, shape, stride);
                Err(PyRuntimeError::new_err("built without CUDA support"))
            }
        })
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

/// Whether launch arguments are read straight from torch's `TensorImpl`
/// (probed and never contradicted), rather than through their attributes.
#[pyfunction]
fn fast_tensor_reads(py: Python<'_>) -> bool {
    crate::tensor_impl::active(py)
}

/// Finds where torch keeps each tensor field (once per process; call it
/// before recording starts, as it makes tensors). Whether that worked.
#[pyfunction]
fn probe_tensor_impl(py: Python<'_>) -> PyResult<bool> {
    guard(|| crate::describe::probe_tensor_impl(py))
}

/// Whether this thread is inside an Inductor launch being recorded.
#[pyfunction]
fn in_native_launch() -> bool {
    crate::triton_hook::in_launch()
}

/// Whether CUDA tensors can be hashed on the device here.
#[pyfunction]
fn gpu_supported() -> bool {
    #[cfg(feature = "cuda")]
    {
        crate::gpu::driver_present()
    }
    #[cfg(not(feature = "cuda"))]
    false
}

#[pymethods]
impl TraceFile {
    /// Creates `path`, writes the header (given as a JSON object), and
    /// starts keeping the process table current (pause files of child
    /// processes are looked for in `pause_dir`).
    #[new]
    fn new(path: PathBuf, header_json: &str, pause_dir: PathBuf) -> PyResult<Self> {
        guard(|| {
            let header: Header = serde_json::from_str(header_json)
                .map_err(|e| PyValueError::new_err(format!("bad header: {e}")))?;
            let failed =
                |e: std::io::Error| PyRuntimeError::new_err(format!("{}: {e}", path.display()));
            let writer = BackgroundWriter::create(&path, &header).map_err(failed)?;
            let start = Instant::now();
            let watcher = Watcher::start(writer.sink().map_err(failed)?, &path, start, pause_dir)
                .map_err(failed)?;
            Ok(TraceFile {
                writer: Some(writer),
                watcher: Some(watcher),
                dtypes: Dtypes::default(),
                next_seq: 0,
                start,
            })
        })
    }

    /// Queues a source record; returns its id.
    fn source(&mut self, path: &str, lang: &str, text: &str) -> PyResult<u64> {
        guard(|| self.writer()?.source(path, lang, text).map_err(io_error))
    }

    /// Queues a kernel record (JSON without `id`); returns its id.
    fn kernel(&mut self, kernel_json: &str) -> PyResult<u64> {
        guard(|| {
            let mut value: serde_json::Value = serde_json::from_str(kernel_json)
                .map_err(|e| PyValueError::new_err(format!("bad kernel: {e}")))?;
            if let Some(map) = value.as_object_mut() {
                map.insert("id".into(), 0.into());
            }
            let kernel: KernelDef = serde_json::from_value(value)
                .map_err(|e| PyValueError::new_err(format!("bad kernel: {e}")))?;
            self.writer()?.kernel(kernel).map_err(io_error)
        })
    }

    /// Reads the arguments of a launch before it runs: `access` holds a
    /// code per argument (`i` read, `o` written, `x` both, `a` allocated),
    /// and readable arguments are hashed when `hash_pre`. CUDA tensors are
    /// hashed on the device on `stream` (the current stream when None)
    /// when `device_hashing`, else copied to the host.
    #[pyo3(signature = (values, access, hash_pre, device_hashing, stream=None))]
    pub(crate) fn describe(
        &mut self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        access: &[u8],
        hash_pre: bool,
        device_hashing: bool,
        stream: Option<u64>,
    ) -> PyResult<Described> {
        guard(|| {
            Described::new(
                py,
                self.tables()?,
                values,
                access,
                hash_pre,
                device_hashing,
                stream,
            )
        })
    }

    /// Adds the results of an operation, after it ran, to `described`.
    fn extend(
        &mut self,
        py: Python<'_>,
        described: &mut Described,
        values: &Bound<'_, PyAny>,
        access: &[u8],
    ) -> PyResult<()> {
        guard(|| described.add(py, self.tables()?, values, access, false))
    }

    /// Queues a launch after it ran and returns its sequence number: its
    /// arguments are hashed (and summarised) as asked; device results are
    /// filled in by the writer thread once they are in.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch(
        &mut self,
        py: Python<'_>,
        described: &mut Described,
        kernel: u64,
        grid: Vec<u64>,
        stream: u64,
        thread: u64,
        hash_post: bool,
        stats: bool,
    ) -> PyResult<u64> {
        guard(|| {
            let seq = self.next_seq;
            self.next_seq += 1;
            let ts = self.now();
            described.complete(py, hash_post, stats)?;
            let launch = LaunchRecord {
                seq,
                kernel,
                grid,
                stream,
                device: described.device(),
                thread,
                ts,
                autotune: false,
                args: std::mem::take(&mut described.args),
            };
            self.queue(Record::Launch(launch), described)?;
            Ok(seq)
        })
    }

    /// The sequence number the next launch will get.
    #[getter]
    fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Nanoseconds since the trace was created: the time of every record.
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
    /// Queues any other record, given as a JSON object whose first key is `r`.
    fn record(&mut self, record_json: &str) -> PyResult<()> {
        guard(|| {
            let record: Record = serde_json::from_str(record_json)
                .map_err(|e| PyValueError::new_err(format!("bad record: {e}")))?;
            self.writer()?.record(record).map_err(io_error)
        })
    }

    /// Queues one call of the compiled graph `graph` (its cache key) with
    /// its inputs described (and hashed) by `describe`: the described
    /// values are the graph's inputs from position `first` on. `names`, a
    /// list of the graph's input names, is read the first time the graph
    /// is called.
    fn graph_call(
        &mut self,
        graph: &str,
        names: &Bound<'_, PyAny>,
        first: u64,
        described: &mut Described,
    ) -> PyResult<()> {
        guard(|| {
            let graph = self
                .writer()?
                .graph(graph, || {
                    names
                        .extract()
                        .map_err(|e: PyErr| std::io::Error::other(e.to_string()))
                })
                .map_err(io_error)?;
            let call = CallRecord {
                graph,
                before: self.next_seq,
                device: described.device(),
                first,
                args: std::mem::take(&mut described.args),
            };
            self.queue(Record::Call(call), described)
        })
    }

    /// Queues the tensors of one device still alive as recording stops
    /// (the program's results), described (and hashed) by `describe`.
    fn results(&mut self, described: &mut Described) -> PyResult<()> {
        guard(|| {
            let results = ResultsRecord {
                before: self.next_seq,
                device: described.device(),
                args: std::mem::take(&mut described.args),
            };
            self.queue(Record::Results(results), described)
        })
    }

    /// Waits until everything queued so far is in the file.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let writer = self
            .writer
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("the trace is closed"))?;
        py.detach(|| guard(|| writer.flush().map_err(io_error)))
    }

    /// The writer thread's I/O error, if any.
    fn error(&self) -> Option<String> {
        self.writer.as_ref().and_then(BackgroundWriter::error)
    }

    /// Writes the end record and waits until everything is in the file.
    fn close(&mut self, py: Python<'_>, ts: u64, reason: &str) -> PyResult<()> {
        let Some(mut writer) = self.writer.take() else {
            return Ok(());
        };
        let watcher = self.watcher.take();
        let reason = reason.to_owned();
        py.detach(|| {
            guard(|| {
                // Its last scan goes into the trace before the end record.
                if let Some(watcher) = watcher {
                    watcher.stop();
                }
                writer.finish(ts, &reason).map_err(io_error)
            })
        })
    }
}

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
fn pause_tick(py: Python<'_>, millis: u64, resume_file: &str) -> Option<&'static str> {
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

/// The native half of the tritontui recorder.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(hash_host, m)?)?;
    m.add_function(wrap_pyfunction!(hash_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(stats_host, m)?)?;
    m.add_class::<TraceFile>()?;
    m.add_class::<GpuBatch>()?;
    m.add_class::<Described>()?;
    m.add_class::<crate::triton_hook::TritonHook>()?;
    m.add_class::<crate::triton_hook::BoundRun>()?;
    m.add_function(wrap_pyfunction!(in_native_launch, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_supported, m)?)?;
    m.add_function(wrap_pyfunction!(fast_tensor_reads, m)?)?;
    m.add_function(wrap_pyfunction!(probe_tensor_impl, m)?)?;
    m.add_function(wrap_pyfunction!(pause_tick, m)?)?;
    m.add("HASH_ALGORITHM", tritontui_trace::hash::ALGORITHM)?;
    Ok(())
}

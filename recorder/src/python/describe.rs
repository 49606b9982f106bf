//! Launch arguments as the trace records them, read from torch tensors in
//! one native call per launch: layout, address, and the hashes (and, when
//! asked, summary statistics) before and after the launch.
//!
//! This is the recorder's hot path. Plain tensors are read from their
//! `TensorImpl` ([`super::tensor_impl`]), others through their attributes,
//! and every launch's CUDA tensors are hashed on the device in one batch on
//! the launch's stream, which the writer thread waits for.

use super::alive::Alive;
use super::host::hash_host_view;
use super::recording_options::After;
use super::tensor_impl::{Dims, ELSEWHERE, HOST, Meta};
use crate::background::{Field, Fill};
use crate::phases::{Phase, timed};
use crate::recording::call_scope::Known;
use crate::recording::cuda_graphs::Capturing;
use crate::stats::Summary;
use pyo3::exceptions::PyRuntimeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use std::collections::HashMap;
#[cfg(feature = "cuda")]
use std::sync::Arc;
use tritontui_trace::Span;
use tritontui_trace::format::{ArgValue, LayoutDef, Stats, TensorArg};
use tritontui_trace::hash::View;
use tritontui_trace::known_views::{KnownViews, Touched, view_key};

mod read;
#[cfg(feature = "cuda")]
mod rows;
mod scheduled;

use read::read_tensor;
pub use read::{NativeTensor, Read, probe_tensor_impl};

/// How a launch uses an argument, as the hooks pass it (one byte per
/// argument): the declared access of the trace (`tritontui_trace::Access`)
/// and, beside it, memory handed out unwritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgUse {
    /// Read only: hashed before the launch.
    In,
    /// Written only: its old bytes do not matter, so not hashed before.
    Out,
    /// Read and written.
    InOut,
    /// Memory the operation handed out without writing it (an allocation,
    /// an output left unwritten): never hashed (its bytes mean nothing),
    /// marked written and allocated.
    Allocated,
}

impl ArgUse {
    /// `i`, `o`, `x` or `a`.
    pub fn from_code(code: u8) -> PyResult<ArgUse> {
        Ok(match code {
            b'i' => ArgUse::In,
            b'o' => ArgUse::Out,
            b'x' => ArgUse::InOut,
            b'a' => ArgUse::Allocated,
            other => {
                return Err(PyRuntimeError::new_err(format!(
                    "unknown access code {:?}",
                    other as char
                )));
            }
        })
    }
}

/// One tensor argument as read from torch.
struct TensorView {
    tensor: Alive,
    /// Index of the argument in the record.
    arg: usize,
    access: ArgUse,
    hashable: bool,
    /// Whether a hash before the launch is coming.
    hashed_before: bool,
    /// The hash before the launch the data flow gave, where it was taken
    /// on the host (an inherited one is not in the record).
    inherited_hash: Option<u64>,
    /// CUDA device index, [`HOST`] or [`ELSEWHERE`].
    device: i32,
    ptr: u64,
    itemsize: u64,
    dtype: &'static str,
    shape: Dims,
    stride: Dims,
    /// Storage offset, in elements.
    offset: u64,
}

impl TensorView {
    /// Argument `arg` of the record, `meta` as read; `exact`: a plain
    /// tensor (or parameter), whose bytes are its own to hash.
    fn new(tensor: Alive, meta: Meta, exact: bool, arg: usize, access: ArgUse) -> TensorView {
        TensorView {
            tensor,
            arg,
            access,
            hashable: exact
                && meta.device != ELSEWHERE
                && !meta.dtype.starts_with('q')
                && within_storage(&meta),
            hashed_before: false,
            inherited_hash: None,
            device: meta.device,
            ptr: meta.ptr,
            itemsize: u64::from(meta.itemsize),
            dtype: meta.dtype,
            shape: meta.shape,
            stride: meta.stride,
            offset: meta.offset,
        }
    }

    /// The bytes the view spans from its first element.
    fn extent(&self) -> u64 {
        let stride: smallvec::SmallVec<[i64; 6]> = self.stride.iter().map(|&s| s as i64).collect();
        LayoutDef::extent_of(&self.shape, &stride, self.itemsize as u32)
    }

    /// The bytes it covers, `[start, end)` on its device.
    fn span(&self) -> Span {
        Span::new(self.device, self.ptr, self.ptr + self.extent())
    }

    /// The key this view (of layout `layout`) is known by in the data
    /// flow (`known_views::view_key`): views reading the same bytes in
    /// memory order share one, whatever their shape or dtype.
    fn known_by(&self, layout: u64) -> u64 {
        let stride: smallvec::SmallVec<[i64; 6]> = self.stride.iter().map(|&s| s as i64).collect();
        let extent = LayoutDef::extent_of(&self.shape, &stride, self.itemsize as u32);
        view_key(layout, &self.shape, &stride, extent)
    }
}

/// A dtype's trace name and element size, looked up once per dtype object.
#[derive(Default)]
pub struct Dtypes {
    by_object: HashMap<usize, (&'static str, u32)>,
}

impl Dtypes {
    fn get(&mut self, dtype: &Bound<'_, PyAny>) -> PyResult<(&'static str, u32)> {
        let key = dtype.as_ptr() as usize;
        if let Some(&found) = self.by_object.get(&key) {
            return Ok(found);
        }
        // `torch.float32` is named `float32`; dtype objects live for the
        // whole process, so the few names are leaked once.
        let text = dtype.str()?.to_string();
        let name: &'static str = Box::leak(
            text.rsplit('.')
                .next()
                .unwrap_or(&text)
                .to_owned()
                .into_boxed_str(),
        );
        let itemsize: u32 = dtype.getattr(intern!(dtype.py(), "itemsize"))?.extract()?;
        self.by_object.insert(key, (name, itemsize));
        Ok((name, itemsize))
    }
}

/// What describing interns into: the trace's layouts and the dtype table;
/// the views whose hash before a launch may be inherited, if any; and,
/// for a launch captured into a CUDA graph, the table slots of earlier
/// captured launches' hashes after them it may share, if any.
pub struct Tables<'a> {
    pub writer: &'a mut crate::background::BackgroundWriter,
    pub dtypes: &'a mut Dtypes,
    pub known: Option<&'a KnownViews<Known>>,
    pub captured: Option<&'a KnownViews<Option<u64>>>,
}

/// `torch.Tensor`, `torch.nn.Parameter` and `torch.strided`, looked up once.
struct Torch {
    tensor: Py<PyType>,
    parameter: Py<PyType>,
    strided: Py<PyAny>,
}

static TORCH: PyOnceLock<Torch> = PyOnceLock::new();

fn torch(py: Python<'_>) -> PyResult<&Torch> {
    TORCH.get_or_try_init(py, || {
        let torch = py.import("torch")?;
        Ok(Torch {
            tensor: torch.getattr("Tensor")?.cast_into::<PyType>()?.unbind(),
            parameter: torch
                .getattr("nn")?
                .getattr("Parameter")?
                .cast_into::<PyType>()?
                .unbind(),
            strided: torch.getattr("strided")?.unbind(),
        })
    })
}

/// Whether `value` is a tensor (of any subclass).
pub fn is_tensor(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    let torch = torch(value.py())?;
    value.is_instance(torch.tensor.bind(value.py()))
}

/// Whether `value` is a tensor of a subclass other than `nn.Parameter`
/// (a tracer's fake or functional tensor, or a subclass of the program's).
pub fn is_tensor_subclass(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    let torch = torch(value.py())?;
    let kind = value.get_type();
    Ok(!kind.is(torch.tensor.bind(value.py()))
        && !kind.is(torch.parameter.bind(value.py()))
        && value.is_instance(torch.tensor.bind(value.py()))?)
}

/// Where the hashes of one launch's CUDA tensors are computed: a batch on
/// the launch's stream, opened by the first CUDA tensor. (Built without
/// CUDA support, only `capturing` and `error` are read.)
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
struct DeviceWork {
    enabled: bool,
    stream: Option<u64>,
    capturing: Option<bool>,
    /// The CUDA graph capture under way on this thread, for a launch's
    /// arguments (their hashes then join the graph).
    capture: Option<Capturing>,
    /// Whether the batch holds its hashes until it is finished
    /// (`Batch::hold`: a graph call's inputs, which may yet run beside it).
    hold: bool,
    ordinal: i32,
    /// Boxed: a batch holds its table inline (kilobytes), and a
    /// [`Described`] moves several times a launch.
    #[cfg(feature = "cuda")]
    batch: Option<Box<crate::gpu::Batch>>,
    error: Option<String>,
}

/// A hash or summary on its way: here now, a ticket of the device batch,
/// or none.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
enum Value<T> {
    Now(T),
    Ticket(usize),
    Missing,
}

/// The arguments of one launch (or the inputs of one graph call) between
/// the moment before it and the moment after.
#[pyclass(module = "tritontui._native")]
pub struct Described {
    pub(crate) args: Vec<ArgValue>,
    tensors: Vec<TensorView>,
    pub(crate) fills: Vec<Fill>,
    work: DeviceWork,
    /// What the session observed before the launch, for it to finish
    /// after (`Session.observe_before`); None when not observed.
    pub(crate) observed: Option<Py<PyAny>>,
    /// Whether the launch writes only the arguments its access codes say
    /// it writes (an aten op, by its schema): [`Described::complete`] then
    /// takes the hash after it of a read-only argument hashed on the host
    /// before it, which shares no byte with an argument it writes, from
    /// that hash instead of reading its bytes again.
    pub(crate) writes_declared: bool,
    /// The `nn.Module` path the launch ran in, when taken (an aten op's,
    /// with `samples`).
    pub(crate) module: Option<String>,
}

#[pymethods]
impl Described {
    /// The first CUDA tensor's device, or -1.
    #[getter(device)]
    fn py_device(&self) -> i32 {
        self.device()
    }

    /// Why device hashing failed during this launch, if it did.
    #[getter(gpu_error)]
    pub fn gpu_error(&self) -> Option<String> {
        self.work.error.clone()
    }
}

impl Described {
    /// Marks the device work failed: its results are not trusted.
    pub fn device_failed(&mut self, error: String) {
        self.work.error.get_or_insert(error);
    }
}

impl Described {
    /// Reads `reads` with their access codes, hashing readable ones now
    /// when `hash_pre` (pure outputs and allocations never are). `capture`
    /// is this thread's CUDA graph capture when `values` are a launch's
    /// arguments. `hold`: device hashes wait to be enqueued until the
    /// batch is finished.
    #[allow(clippy::too_many_arguments)]
    pub fn new<'py>(
        py: Python<'py>,
        tables: Tables<'_>,
        reads: impl IntoIterator<Item = PyResult<Read<'py>>>,
        access: &[u8],
        hash_pre: bool,
        device_hashing: bool,
        stream: Option<u64>,
        capture: Option<Capturing>,
        hold: bool,
    ) -> PyResult<Described> {
        let reads = reads.into_iter();
        // Read natively, the arguments are counted: room for them and
        // their results (a result or two), made once.
        let room = reads.size_hint().0 + 2;
        let mut described = Described {
            args: Vec::with_capacity(room),
            tensors: Vec::with_capacity(room),
            fills: Vec::new(),
            work: DeviceWork {
                enabled: device_hashing,
                stream,
                capturing: None,
                capture,
                hold,
                ordinal: -1,
                #[cfg(feature = "cuda")]
                batch: None,
                error: None,
            },
            observed: None,
            writes_declared: false,
            module: None,
        };
        described.add(py, tables, reads, access, hash_pre)?;
        Ok(described)
    }

    /// Enqueues the device hashes gathered so far (those before the launch
    /// must run before it): the caller's next step after [`Described::new`],
    /// unless it hands them on (`DeferredHashes`). Held hashes wait for
    /// the batch to be finished.
    pub fn dispatch(&mut self) {
        #[cfg(feature = "cuda")]
        if !self.work.hold
            && let Some(batch) = self.work.batch.as_mut()
            && let Err(e) = batch.dispatch()
        {
            self.work.error = Some(e.to_string());
        }
    }

    /// Appends `reads` (results of an operation, after it ran), each
    /// with its access code in `access`.
    pub fn add<'py>(
        &mut self,
        py: Python<'py>,
        mut tables: Tables<'_>,
        reads: impl IntoIterator<Item = PyResult<Read<'py>>>,
        access: &[u8],
        hash_pre: bool,
    ) -> PyResult<()> {
        for (i, read) in reads.into_iter().enumerate() {
            let code = access.get(i).copied().unwrap_or(b'i');
            let access = ArgUse::from_code(code)?;
            let arg = self.args.len();
            let view = match read? {
                Read::Python(value) => match read_tensor(py, tables.dtypes, &value, arg, access)? {
                    Some(view) => view,
                    None => {
                        self.args
                            .push(ArgValue::Scalar(super::scalar::scalar(&value)?));
                        continue;
                    }
                },
                Read::Hashable(value) => {
                    match read_tensor(py, tables.dtypes, &value, arg, access)? {
                        Some(view) if view.hashable => view,
                        _ => continue,
                    }
                }
                Read::Native(tensor) => tensor.view(tables.dtypes, arg, access)?,
                Read::Scalar(value) => {
                    self.args.push(ArgValue::Scalar(value));
                    continue;
                }
            };
            self.push_tensor(py, &mut tables, view, hash_pre)?;
        }
        Ok(())
    }

    /// Appends one tensor argument, hashing it before the launch when
    /// `hash_pre` asks and its access reads it (unless the data flow or a
    /// captured graph's table knows its hash already).
    fn push_tensor(
        &mut self,
        py: Python<'_>,
        tables: &mut Tables<'_>,
        mut view: TensorView,
        hash_pre: bool,
    ) -> PyResult<()> {
        let access = view.access;
        let stride: smallvec::SmallVec<[i64; 6]> = view.stride.iter().map(|&s| s as i64).collect();
        let offset = view.offset;
        let layout = tables
            .writer
            .layout(
                view.dtype,
                view.itemsize as u32,
                &view.shape,
                &stride,
                offset,
            )
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let tensor_index = self.tensors.len();
        let wants_pre = hash_pre && matches!(access, ArgUse::In | ArgUse::InOut);
        // The same bytes known from the data flow, read in the same
        // order: not hashed again.
        let known = tables
            .known
            .filter(|_| wants_pre)
            .and_then(|known| known.get(view.ptr, view.known_by(layout)).copied());
        let inherited = known.is_some_and(Known::hashed);
        if let Some(Known::Hash(hash)) = known {
            view.inherited_hash = Some(hash);
        }
        // Captured: the same view's hash after an earlier captured
        // launch, from the same table slot at every replay.
        let shared = match tables.captured {
            Some(captured) if wants_pre && !inherited => {
                self.shared_slot(py, captured, &view, layout)?
            }
            _ => None,
        };
        let pre = match shared {
            Some(slot) => Value::Now(slot),
            None if wants_pre && !inherited => self.hash(py, &view)?,
            None => Value::Missing,
        };
        view.hashed_before = !matches!(pre, Value::Missing);
        let mut arg = TensorArg {
            layout,
            ptr: view.ptr,
            flags: match access {
                ArgUse::In => 0,
                ArgUse::Allocated => TensorArg::WRITTEN | TensorArg::ALLOCATED,
                ArgUse::Out | ArgUse::InOut => TensorArg::WRITTEN,
            } | if inherited { TensorArg::INHERITED } else { 0 },
            pre: None,
            post: None,
            stats: None,
            samples: None,
            rows: None,
        };
        self.settle(&mut arg.pre, pre, tensor_index, Field::Pre);
        self.args.push(ArgValue::Tensor(arg));
        self.tensors.push(view);
        Ok(())
    }

    /// What the launch left known of each tensor argument's view, after
    /// [`Described::complete`] asked for hashes after it when `hash_post`.
    pub fn touched_after(&self, hash_post: bool) -> Vec<Touched<Known>> {
        self.touched(|_, view, arg| {
            let hashed = hash_post && view.hashable && view.access != ArgUse::Allocated;
            known(hashed, arg.post.filter(|_| view.device == HOST))
        })
    }

    /// What a graph call's entry made known of its inputs' views.
    pub fn touched_inputs(&self) -> Vec<Touched<Known>> {
        self.touched(|_, view, arg| {
            known(view.hashed_before, arg.pre.filter(|_| view.device == HOST))
        })
    }

    /// Each tensor argument's view, with what `value` says of it (given
    /// its index among the launch's tensors).
    fn touched<T>(
        &self,
        mut value: impl FnMut(usize, &TensorView, &TensorArg) -> T,
    ) -> Vec<Touched<T>> {
        self.tensors
            .iter()
            .enumerate()
            .filter_map(|(index, view)| {
                let ArgValue::Tensor(arg) = self.args.get(view.arg)? else {
                    return None;
                };
                Some(Touched {
                    ptr: view.ptr,
                    extent: view.extent(),
                    key: view.known_by(arg.layout),
                    allocated: view.access == ArgUse::Allocated,
                    value: value(index, view, arg),
                })
            })
            .collect()
    }

    /// The table slot of the earlier captured hash of `view` (layout
    /// `layout`) in `captured`, when this launch's hashes go into the same
    /// graph's table.
    fn shared_slot(
        &mut self,
        py: Python<'_>,
        captured: &KnownViews<Option<u64>>,
        view: &TensorView,
        layout: u64,
    ) -> PyResult<Option<u64>> {
        let Some(&Some(slot)) = captured.get(view.ptr, view.known_by(layout)) else {
            return Ok(None);
        };
        let into_graph = view.device >= 0 && self.hashes_into_graph() && self.capturing(py)?;
        Ok(into_graph.then_some(slot))
    }

    /// After a launch captured into a CUDA graph, its tensor arguments with
    /// the table slot of each one's hash after it (None for one not hashed
    /// into the table).
    pub fn captured_after(&self) -> Vec<Touched<Option<u64>>> {
        #[cfg(feature = "cuda")]
        let slot_of = |tensor: usize| {
            let fill = self
                .fills
                .iter()
                .find(|f| f.arg == tensor && f.field == Field::Post)?;
            self.work.batch.as_ref()?.captured_slot(fill.index)
        };
        #[cfg(not(feature = "cuda"))]
        let slot_of = |_: usize| None;
        self.touched(|tensor, _, _| slot_of(tensor))
    }

    /// After the launch: hashes, summarises, samples and hashes by row
    /// what `after` asks (samples of the written floating tensors only:
    /// what the launch made, for comparing two programs' numerics).
    pub fn complete(&mut self, py: Python<'_>, after: After) -> PyResult<()> {
        let tensors = std::mem::take(&mut self.tensors);
        // The host bytes the launch writes, when its reads keep theirs.
        let written: Vec<Span> = if self.writes_declared {
            tensors
                .iter()
                .filter(|v| v.access != ArgUse::In && v.device == HOST)
                .map(TensorView::span)
                .collect()
        } else {
            Vec::new()
        };
        for (index, view) in tensors.iter().enumerate() {
            if view.access == ArgUse::Allocated {
                continue;
            }
            let mut post = None;
            let mut summary = None;
            let mut samples = None;
            if after.hash {
                post = self.unchanged_read(view, &written);
                if post.is_none() {
                    let result = self.hash(py, view)?;
                    self.settle(&mut post, result, index, Field::Post);
                }
            }
            if after.stats {
                let result = self.stats(py, view)?;
                self.settle(&mut summary, result, index, Field::Stats);
            }
            if after.samples && view.access != ArgUse::In {
                let result = self.samples(py, view)?;
                self.settle(&mut samples, result, index, Field::Samples);
            }
            let rows = if after.rows {
                self.rows(py, view, index)?
            } else {
                None
            };
            if let ArgValue::Tensor(arg) = &mut self.args[view.arg] {
                arg.post = post;
                arg.stats = summary;
                arg.samples = samples;
                arg.rows = rows;
            }
        }
        self.tensors = tensors;
        Ok(())
    }

    /// The first CUDA tensor's device, or -1.
    pub fn device(&self) -> i32 {
        self.tensors
            .iter()
            .map(|t| t.device)
            .find(|&d| d >= 0)
            .unwrap_or(-1)
    }

    /// Turns the device batch, if any, into what the writer thread waits
    /// for. When the device failed, the results it owed are dropped.
    pub fn take_pending(&mut self) -> Option<crate::background::Pending> {
        #[cfg(feature = "cuda")]
        if let Some(batch) = self.work.batch.take() {
            match batch.finish() {
                Ok(finished) if self.work.error.is_none() => {
                    return Some(Box::new(move || finished.wait().map_err(|e| e.to_string())));
                }
                // Some of its work failed to launch: its results are not
                // trusted (dropping it gives its slots back).
                Ok(_) => {}
                Err(e) => self.work.error = Some(e.to_string()),
            }
        }
        self.fills.clear();
        None
    }

    /// The hash of a tensor: on the device when it can be, else on the host.
    fn hash(&mut self, py: Python<'_>, view: &TensorView) -> PyResult<Value<u64>> {
        if !view.hashable {
            return Ok(Value::Missing);
        }
        if view.device >= 0 {
            // Work enqueued now joins the graph: only a launch's hashes,
            // into the graph's table, and nothing is copied to the host.
            let capturing = self.capturing(py)?;
            if capturing && !self.hashes_into_graph() {
                return Ok(Value::Missing);
            }
            #[cfg(feature = "cuda")]
            if let Some(result) = self.on_device(py, view, |batch, v| unsafe {
                // SAFETY: the view is a live CUDA tensor kept alive by the
                // recorder until its record is written (under a capture,
                // the graph's pool keeps its memory for every replay).
                batch.hash(v.ptr, v.itemsize, &v.shape, &v.stride)
            })? {
                return Ok(result);
            }
            if capturing {
                return Ok(Value::Missing);
            }
        }
        let _timed = timed(Phase::HostHash);
        on_host(py, view, |memory, host| Some(hash_host_view(memory, host)))
            .map(|h| h.map_or(Value::Missing, Value::Now))
    }

    /// Summary statistics of a float tensor, on the device when it can be.
    fn stats(&mut self, py: Python<'_>, view: &TensorView) -> PyResult<Value<Stats>> {
        self.summarize(py, view, Summary::Stats, crate::stats::stats)
    }

    /// The samples of a written float tensor, on the device when it can
    /// be.
    fn samples(&mut self, py: Python<'_>, view: &TensorView) -> PyResult<Value<Vec<f64>>> {
        self.summarize(py, view, Summary::Samples, crate::stats::samples)
    }

    /// A float tensor's `summary`, on the device when it can be (never
    /// inside a CUDA graph capture: its table holds hashes), else by
    /// `on_cpu` over its host bytes.
    fn summarize<T>(
        &mut self,
        py: Python<'_>,
        view: &TensorView,
        summary: Summary,
        on_cpu: fn(&[u8], &View<'_>, &str) -> Option<T>,
    ) -> PyResult<Value<T>> {
        if !view.hashable || crate::stats::decoder(view.dtype).is_none() {
            return Ok(Value::Missing);
        }
        if view.device >= 0 && self.capturing(py)? {
            return Ok(Value::Missing);
        }
        #[cfg(feature = "cuda")]
        if view.device >= 0
            && let Some(kind) = crate::gpu::StatsKind::of(view.dtype)
            && let Some(result) = self.on_device(py, view, |batch, v| unsafe {
                // SAFETY: as for hashes.
                batch.summarize(summary, v.ptr, kind, &v.shape, &v.stride)
            })?
        {
            return Ok(result);
        }
        #[cfg(not(feature = "cuda"))]
        let _ = summary;
        let dtype = view.dtype;
        on_host(py, view, |memory, host| on_cpu(memory, host, dtype))
            .map(|s| s.map_or(Value::Missing, Value::Now))
    }

    /// Whether this launch is captured into the CUDA graph whose capture
    /// runs on this thread: it runs at the graph's replays, not now.
    pub fn captured(&mut self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.work.capture.is_some() && self.device() >= 0 && self.capturing(py)?)
    }

    /// Whether this launch's stream was seen capturing a CUDA graph whose
    /// capture this recording did not see begin (as far as its hashes
    /// asked the stream: not asked when nothing was hashed on the device).
    pub fn in_unseen_capture(&self) -> bool {
        self.work.capture.is_none() && self.work.capturing == Some(true)
    }

    /// Whether device hashes go into a captured graph's table.
    fn hashes_into_graph(&self) -> bool {
        #[cfg(feature = "cuda")]
        {
            self.work.enabled
                && self
                    .work
                    .capture
                    .as_ref()
                    .is_some_and(|capture| capture.table.is_some())
        }
        #[cfg(not(feature = "cuda"))]
        false
    }

    /// Whether a CUDA graph is being captured on the launch's stream (its
    /// described stream, else the current stream of its first CUDA
    /// tensor's device: asked of the driver, else of torch).
    fn capturing(&mut self, py: Python<'_>) -> PyResult<bool> {
        #[cfg(feature = "cuda")]
        if self.work.capturing.is_none()
            && self.work.enabled
            && let Some(stream) = self.launch_stream(py)
            && let Ok(capturing) = crate::gpu::stream_capturing(stream)
        {
            self.work.capturing = Some(capturing);
        }
        if self.work.capturing.is_none() {
            let cuda = py.import(intern!(py, "torch.cuda"))?;
            self.work.capturing = Some(
                cuda.call_method0(intern!(py, "is_current_stream_capturing"))?
                    .extract()?,
            );
        }
        Ok(self.work.capturing == Some(true))
    }

    /// Runs `enqueue` on the launch's device batch; None when the work must
    /// be done on the host instead (device hashing off or failed, or a
    /// tensor on another device than the batch's).
    #[cfg(feature = "cuda")]
    fn on_device<T>(
        &mut self,
        py: Python<'_>,
        view: &TensorView,
        enqueue: impl FnOnce(
            &mut crate::gpu::Batch,
            &TensorView,
        ) -> std::result::Result<Option<usize>, crate::gpu::GpuError>,
    ) -> PyResult<Option<Value<T>>> {
        if !self.work.enabled || self.work.error.is_some() {
            return Ok(None);
        }
        if self.work.batch.is_none() {
            let stream = match self.work.stream {
                Some(stream) => stream,
                None => current_stream(py, view.device)?,
            };
            let begun = match &self.work.capture {
                Some(Capturing {
                    table: Some(table), ..
                }) if self.work.capturing == Some(true) => {
                    if table.ordinal() != view.device {
                        return Ok(Some(Value::Missing));
                    }
                    crate::gpu::Batch::begin_captured(stream, Arc::clone(table))
                }
                _ => crate::gpu::Batch::begin(view.device, stream)
                    .map(|batch| if self.work.hold { batch.hold() } else { batch }),
            };
            match begun {
                Ok(batch) => {
                    self.work.batch = Some(Box::new(batch));
                    self.work.ordinal = view.device;
                }
                Err(e) => {
                    self.work.error = Some(e.to_string());
                    return Ok(None);
                }
            }
        }
        if view.device != self.work.ordinal {
            return Ok(None);
        }
        let Some(batch) = self.work.batch.as_mut() else {
            return Ok(None);
        };
        Ok(Some(match enqueue(batch, view) {
            Ok(Some(index)) => Value::Ticket(index),
            Ok(None) => Value::Missing, // the batch is full
            Err(e) => {
                self.work.error = Some(e.to_string());
                return Ok(None);
            }
        }))
    }

    /// The hash after the launch of `view` when it is its hash before
    /// the launch: the launch writes only what it declares
    /// (`writes_declared`), `view` is only read and shares no byte with
    /// the host bytes the launch writes (`written`), and its hash before
    /// was taken on the host (a device hash is not there yet, and may
    /// race another stream's writes, which a hash after it shows).
    fn unchanged_read(&self, view: &TensorView, written: &[Span]) -> Option<u64> {
        if !self.writes_declared || view.access != ArgUse::In || view.device != HOST {
            return None;
        }
        let ArgValue::Tensor(arg) = self.args.get(view.arg)? else {
            return None;
        };
        let shares_written = Span::any_shared(written, &[view.span()]);
        arg.pre.or(view.inherited_hash).filter(|_| !shares_written)
    }

    /// Puts a value in place now, or a fill for the writer thread.
    fn settle<T>(&mut self, place: &mut Option<T>, result: Value<T>, arg: usize, field: Field) {
        match result {
            Value::Now(value) => *place = Some(value),
            Value::Ticket(index) => self.fills.push(Fill { arg, field, index }),
            Value::Missing => {}
        }
    }
}

/// What a view hashed (`hashed`) holds: its hash where it was taken on
/// the host (a device view's record holds a table slot under a CUDA
/// graph capture, not a hash: the caller passes None), else one coming.
fn known(hashed: bool, hash: Option<u64>) -> Known {
    match (hashed, hash) {
        (false, _) => Known::Unhashed,
        (true, Some(hash)) => Known::Hash(hash),
        (true, None) => Known::Coming,
    }
}

/// Whether a view's bytes lie inside its storage (one past it has no
/// memory to read: a parameter whose storage was resized to nothing).
fn within_storage(meta: &Meta) -> bool {
    let stride: smallvec::SmallVec<[i64; 6]> = meta.stride.iter().map(|&s| s as i64).collect();
    let extent = LayoutDef::extent_of(&meta.shape, &stride, meta.itemsize);
    meta.offset
        .checked_mul(u64::from(meta.itemsize))
        .and_then(|start| start.checked_add(extent))
        .is_some_and(|end| end <= meta.storage_bytes)
}

/// The raw handle of the current stream of CUDA device `device` (what
/// Inductor's wrappers call `get_raw_stream`: no `torch.cuda.Stream`
/// object is built).
#[cfg(feature = "cuda")]
fn current_stream(py: Python<'_>, device: i32) -> PyResult<u64> {
    let torch_c = py.import(intern!(py, "torch._C"))?;
    torch_c
        .call_method1(intern!(py, "_cuda_getCurrentRawStream"), (device,))?
        .extract()
}

/// Runs `f` on the tensor's bytes in host memory; a CUDA tensor is first
/// copied to the host (this waits for the device).
fn on_host<T>(
    py: Python<'_>,
    view: &TensorView,
    f: impl FnOnce(&[u8], &View<'_>) -> Option<T>,
) -> PyResult<Option<T>> {
    let copy;
    let (ptr, shape, stride) = if view.device >= 0 {
        let tensors = py.import(intern!(py, "tritontui._tensors"))?;
        copy = tensors.call_method1(intern!(py, "_host_view"), (view.tensor.python(py)?,))?;
        let ptr: u64 = copy.call_method0(intern!(py, "data_ptr"))?.extract()?;
        let shape: Vec<u64> = copy.getattr(intern!(py, "shape"))?.extract()?;
        let stride: Vec<u64> = copy.call_method0(intern!(py, "stride"))?.extract()?;
        (ptr, shape, stride)
    } else {
        (view.ptr, view.shape.to_vec(), view.stride.to_vec())
    };
    let shape: Vec<usize> = shape.iter().map(|&n| n as usize).collect();
    let stride: Vec<usize> = stride.iter().map(|&n| n as usize).collect();
    let host = View {
        itemsize: view.itemsize as usize,
        shape: &shape,
        stride: &stride,
    };
    // The GIL stays held: this runs inside a `&mut TraceFile` call, which
    // another Python thread must not enter meanwhile.
    // SAFETY: `ptr` is the first element of a live dense host tensor (the
    // argument itself, or `copy`, both held here) covering the view.
    let memory = unsafe { super::host::view_memory(ptr as usize, &host) };
    Ok(f(memory, &host))
}

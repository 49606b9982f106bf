//! The C entry point that graphs generated with a C++ wrapper call around
//! each launch (`torch._inductor.config.cpp_wrapper`, AOTInductor
//! packages), while the recorder's codegen hooks are in
//! (`tritontui.hooks.cpp_wrapper`), and the recording of those launches.
//!
//! Generated code declares `tritontui_launch` as a weak `extern "C"`
//! symbol and calls it only when it resolved: a module loaded without
//! this extension in the global scope (no recorder) runs as the stock
//! one. This extension exports the symbol; a recording session binds a
//! [`CppWrapperHook`] here while it records.
//!
//! Each call passes a site (a static string the codegen wrote: the
//! kernel's kind, name, one code per value and the values' names), the
//! phase (0 before the launch, 1 after) and the values: tensor handles
//! (`AtenTensorHandle`, that is `at::Tensor*`), integers and floats
//! carried in the pointer's bits. Tensors are handed to the describer as
//! new tensors sharing the handle's storage (a new handle, stolen by
//! `torch._C._aoti.alloc_tensors_by_stealing_from_void_ptrs`, which frees
//! it), so that the launch is described and hashed exactly as the Python
//! wrapper's; the rest of a launch runs here, with no Python frame of its
//! own, as for [`super::triton_hook`]. What is fixed per site (its name,
//! argument order and access, the kernel's definition, its grid for given
//! sizes) comes from Python once and is cached.

use super::describe::Described;
use super::dynamo_off::DynamoOff;
use super::hook_session::{HookSession, poisoned};
use super::thread_state::{enter_launch, leave_launch};
use pyo3::exceptions::PyRuntimeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyList;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::cell::RefCell;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// `aoti_torch_new_tensor_handle(AtenTensorHandle, AtenTensorHandle*)`.
type NewHandle = unsafe extern "C" fn(*mut c_void, *mut *mut c_void) -> i32;

/// Whether a recorder is bound: checked before anything else, so that a
/// hooked module run with no recording costs a load and a branch.
static ON: AtomicBool = AtomicBool::new(false);
static BOUND: Mutex<Option<Py<CppWrapperHook>>> = Mutex::new(None);
/// Calls made since the extension loaded (how the recorder tells a
/// graph whose calls never reached it).
static CALLS: AtomicU64 = AtomicU64::new(0);

/// Whether an error of this hook's own was shown already.
static REPORTED: AtomicBool = AtomicBool::new(false);

/// Shows the hook's first error of its own (later ones would repeat it
/// at every launch).
fn report_once(py: Python<'_>, error: PyErr) {
    if !REPORTED.swap(true, Ordering::Relaxed) {
        error.print(py);
    }
}

/// The integer arguments of a launch, which its grid depends on.
type Sizes = SmallVec<[i64; 4]>;

/// What is fixed for one call site, asked of Python at its first launch
/// (`tritontui.hooks.cpp_wrapper.prepare`).
struct Site {
    /// The site string's address, which names it to Python.
    address: usize,
    name: String,
    /// One code per value (see `is_tensor`; `n` integer, `f` float).
    codes: Vec<u8>,
    /// The values there before the call, in order, then those it
    /// returns: the order of the kernel's arguments in the trace.
    given: Vec<usize>,
    returned: Vec<usize>,
    /// The describer's access codes of the given values.
    access: Vec<u8>,
    integers: Vec<usize>,
    /// Whether the session records this kernel.
    wanted: bool,
    kernel: OnceLock<u64>,
    grids: Mutex<FxHashMap<Sizes, Vec<u64>>>,
}

/// A launch between the hook's two calls, on this thread.
struct Pending {
    address: usize,
    hook: Py<CppWrapperHook>,
    site: Arc<Site>,
    /// None when not recorded (not wanted, or its arguments could not
    /// be described).
    described: Option<(Described, Option<u64>)>,
}

thread_local! {
    /// Launches begun on this thread and not ended: at most one, unless
    /// generated code raised between a launch's two calls.
    static PENDING: RefCell<Vec<Pending>> = const { RefCell::new(Vec::new()) };
}

/// The recorder of one session's C++-wrapped launches.
#[pyclass(module = "tritontui._native", frozen)]
pub struct CppWrapperHook {
    session: HookSession,
    /// `tritontui.hooks.cpp_wrapper`: `prepare`, `define` and `grid`.
    helpers: Py<PyAny>,
    /// Makes Python tensors of a list of owning handles, freeing them.
    steal: Py<PyAny>,
    new_handle: NewHandle,
    /// `torch._C._cuda_getCurrentRawStream` (None in a torch without CUDA).
    current_stream: Option<Py<PyAny>>,
    sites: Mutex<FxHashMap<usize, Arc<Site>>>,
}

#[pymethods]
impl CppWrapperHook {
    /// `session` is the recording session; `helpers` the Python module of
    /// these hooks; `steal` is
    /// `torch._C._aoti.alloc_tensors_by_stealing_from_void_ptrs` (its
    /// singular twin copies the tensor and never frees the handle);
    /// `new_handle` the address of `aoti_torch_new_tensor_handle`;
    /// `current_stream` `torch._C._cuda_getCurrentRawStream` or None.
    #[new]
    fn new(
        py: Python<'_>,
        session: Py<PyAny>,
        helpers: Py<PyAny>,
        steal: Py<PyAny>,
        new_handle: usize,
        current_stream: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        if new_handle == 0 {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "aoti_torch_new_tensor_handle has no address",
            ));
        }
        // SAFETY: the caller passes the address of torch's exported
        // `aoti_torch_new_tensor_handle`, whose C signature is NewHandle.
        let new_handle = unsafe { std::mem::transmute::<usize, NewHandle>(new_handle) };
        Ok(CppWrapperHook {
            session: HookSession::new(py, session)?,
            helpers,
            steal,
            new_handle,
            current_stream,
            sites: Mutex::new(FxHashMap::default()),
        })
    }
}

/// Binds `hook`: hooked modules' launches are recorded by it from now on.
#[pyfunction]
pub fn cpp_wrapper_bind(hook: Py<CppWrapperHook>) {
    *BOUND.lock().unwrap_or_else(|e| e.into_inner()) = Some(hook);
    ON.store(true, Ordering::Release);
}

/// Unbinds the recorder: later calls return at once.
#[pyfunction]
pub fn cpp_wrapper_unbind(py: Python<'_>) {
    ON.store(false, Ordering::Release);
    let taken = BOUND.lock().unwrap_or_else(|e| e.into_inner()).take();
    drop(taken);
    drop_unfinished(py);
}

/// How many times generated code called in (bound or not).
#[pyfunction]
pub fn cpp_wrapper_calls() -> u64 {
    CALLS.load(Ordering::Relaxed)
}

/// Forgets the launches of this thread that began and never ended (the
/// generated code raised between the hook's two calls): the thread is no
/// longer inside a launch, and each recorded one leaves a gap in its
/// trace.
#[pyfunction]
pub fn cpp_wrapper_drop_unfinished(py: Python<'_>) {
    drop_unfinished(py);
}

fn drop_unfinished(py: Python<'_>) {
    let unfinished = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
    for pending in unfinished.into_iter().rev() {
        if pending.described.is_some() {
            leave_launch();
            let hook = pending.hook.get();
            let error = PyRuntimeError::new_err("the launch raised");
            hook.session.unrecorded(py, &pending.site.name, error);
        }
    }
}

/// One value code of a site: the access of a tensor (`i`, `o`, `x`, `r`
/// returned by the call), or a scalar (`n` integer, `f` float).
fn is_tensor(code: u8) -> bool {
    matches!(code, b'i' | b'o' | b'x' | b'r')
}

/// Called by generated code around each launch; never unwinds into it.
///
/// # Safety
/// `site` is a NUL-terminated string whose third field (fields split by
/// `\x1f`: kind, name, codes, names) has one code per value; `values`
/// points to that many values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tritontui_launch(
    site: *const c_char,
    phase: c_int,
    values: *const *mut c_void,
) {
    CALLS.fetch_add(1, Ordering::Relaxed);
    if !ON.load(Ordering::Acquire) || site.is_null() {
        return;
    }
    let address = site as usize;
    // SAFETY: the codegen passes a static NUL-terminated string.
    let text = unsafe { CStr::from_ptr(site) }.to_bytes();
    let Some(codes) = text.split(|&b| b == 0x1f).nth(2) else {
        return;
    };
    let count = codes.len();
    let values: &[*mut c_void] = if count == 0 || values.is_null() {
        &[]
    } else {
        // SAFETY: the codegen passes one value per code.
        unsafe { std::slice::from_raw_parts(values, count) }
    };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        Python::attach(|py| {
            let hook = BOUND
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .map(|h| h.clone_ref(py));
            let Some(hook) = hook else {
                return;
            };
            let _off = DynamoOff::enter(py);
            let done = if phase == 0 {
                begin(py, &hook, address, values)
            } else {
                end(py, address, values)
            };
            if let Err(e) = done {
                report_once(py, e);
            }
        })
    }));
}

/// The hook's first call: describes the launch's arguments (hashing
/// them as the session asks) and leaves it pending.
fn begin(
    py: Python<'_>,
    hook: &Py<CppWrapperHook>,
    address: usize,
    values: &[*mut c_void],
) -> PyResult<()> {
    // Call sites never nest: what is still pending raised before its end.
    drop_unfinished(py);
    let this = hook.get();
    let site = this.site(py, address)?;
    let described = if site.wanted {
        this.describe(py, &site, values)
    } else {
        None
    };
    if described.is_some() {
        enter_launch();
    }
    PENDING.with(|p| {
        p.borrow_mut().push(Pending {
            address,
            hook: hook.clone_ref(py),
            site,
            described,
        })
    });
    Ok(())
}

/// The hook's second call: writes the launch record.
fn end(py: Python<'_>, address: usize, values: &[*mut c_void]) -> PyResult<()> {
    let pending = PENDING.with(|p| {
        let mut stack = p.borrow_mut();
        match stack.last() {
            Some(last) if last.address == address => stack.pop(),
            _ => None,
        }
    });
    let Some(Pending {
        hook,
        site,
        described: Some((mut described, stream)),
        ..
    }) = pending
    else {
        return Ok(());
    };
    leave_launch();
    let this = hook.get();
    if let Err(e) = this.record(py, &site, values, &mut described, stream) {
        this.session.fail(py, e);
    }
    Ok(())
}

impl CppWrapperHook {
    /// What is fixed for the site at `address`: cached, or asked of Python
    /// at its first launch.
    fn site(&self, py: Python<'_>, address: usize) -> PyResult<Arc<Site>> {
        if let Some(found) = self.sites.lock().map_err(poisoned)?.get(&address) {
            return Ok(Arc::clone(found));
        }
        type Answer = (
            String,
            Vec<u8>,
            Vec<usize>,
            Vec<usize>,
            Vec<u8>,
            Vec<usize>,
            bool,
        );
        let (name, codes, given, returned, access, integers, wanted): Answer = self
            .helpers
            .bind(py)
            .call_method1(
                intern!(py, "prepare"),
                (self.session.python.bind(py), address),
            )?
            .extract()?;
        let site = Arc::new(Site {
            address,
            name,
            codes,
            given,
            returned,
            access,
            integers,
            wanted,
            kernel: OnceLock::new(),
            grids: Mutex::new(FxHashMap::default()),
        });
        let mut sites = self.sites.lock().map_err(poisoned)?;
        Ok(Arc::clone(sites.entry(address).or_insert(site)))
    }

    /// The launch's given values described (None, with a gap in the trace,
    /// when they cannot be), with the stream it runs on.
    fn describe(
        &self,
        py: Python<'_>,
        site: &Site,
        values: &[*mut c_void],
    ) -> Option<(Described, Option<u64>)> {
        let described = self
            .values(py, site, &site.given, values)
            .and_then(|given| {
                let stream = self.stream(py, &given)?;
                let described = self.session.before(
                    py,
                    given.as_any(),
                    &site.access,
                    self.session.options.hash_inputs,
                    stream,
                    &site.name,
                )?;
                Ok((described, stream))
            });
        match described {
            Ok(described) => Some(described),
            Err(e) => {
                self.session.unrecorded(py, &site.name, e);
                None
            }
        }
    }

    /// Writes the launch record, with the tensors the call returned.
    fn record(
        &self,
        py: Python<'_>,
        site: &Site,
        values: &[*mut c_void],
        described: &mut Described,
        stream: Option<u64>,
    ) -> PyResult<()> {
        let returned = self.values(py, site, &site.returned, values)?;
        let codes = vec![b'o'; site.returned.len()];
        let results = (!site.returned.is_empty()).then_some((returned.as_any(), &codes[..]));
        let kernel = self.kernel(py, site)?;
        let grid = self.grid(py, site, values)?;
        self.session
            .after(py, described, results, kernel, grid, stream.unwrap_or(0))
    }

    /// The trace's kernel id of the site's kernel, defined the first time.
    fn kernel(&self, py: Python<'_>, site: &Site) -> PyResult<u64> {
        if let Some(&kernel) = site.kernel.get() {
            return Ok(kernel);
        }
        let kernel: u64 = self
            .helpers
            .bind(py)
            .call_method1(
                intern!(py, "define"),
                (self.session.python.bind(py), site.address),
            )?
            .extract()?;
        Ok(*site.kernel.get_or_init(|| kernel))
    }

    /// The launch's grid (a Triton kernel's; empty for others), from the
    /// cache or, for new sizes, from Python.
    fn grid(&self, py: Python<'_>, site: &Site, values: &[*mut c_void]) -> PyResult<Vec<u64>> {
        if site.integers.is_empty() {
            return Ok(Vec::new());
        }
        let sizes: Sizes = site
            .integers
            .iter()
            .map(|&i| values.get(i).map_or(0, |&v| v as i64))
            .collect();
        if let Some(grid) = site.grids.lock().map_err(poisoned)?.get(&sizes) {
            return Ok(grid.clone());
        }
        let grid: Vec<u64> = self
            .helpers
            .bind(py)
            .call_method1(intern!(py, "grid"), (site.address, sizes.to_vec()))?
            .extract()?;
        site.grids
            .lock()
            .map_err(poisoned)?
            .insert(sizes, grid.clone());
        Ok(grid)
    }

    /// The values at `positions`, as Python objects: tensors sharing the
    /// handles' storage (None for a null handle, or a returned one before
    /// the call), integers and floats.
    fn values<'py>(
        &self,
        py: Python<'py>,
        site: &Site,
        positions: &[usize],
        values: &[*mut c_void],
    ) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        // Where each tensor goes in `list`, and its new owning handle.
        let mut tensors: Vec<(usize, *mut c_void)> = Vec::new();
        let mut failed = None;
        for (slot, &i) in positions.iter().enumerate() {
            let (Some(&code), Some(&value)) = (site.codes.get(i), values.get(i)) else {
                list.append(py.None())?;
                continue;
            };
            match code {
                c if is_tensor(c) && !value.is_null() && failed.is_none() => {
                    match self.owning_handle(value) {
                        Ok(owned) => tensors.push((slot, owned)),
                        Err(e) => failed = Some(e),
                    }
                    list.append(py.None())?;
                }
                b'n' => list.append(value as i64)?,
                b'f' => list.append(f64::from_bits(value as u64))?,
                _ => list.append(py.None())?,
            }
        }
        // The handles are taken over (and freed) even when one failed.
        let stolen = self.steal_all(py, &tensors)?;
        if let Some(e) = failed {
            return Err(e);
        }
        for ((slot, _), tensor) in tensors.iter().zip(stolen.iter()) {
            list.set_item(*slot, tensor)?;
        }
        Ok(list)
    }

    /// A new handle owning a reference to tensor handle `value`'s tensor.
    fn owning_handle(&self, value: *mut c_void) -> PyResult<*mut c_void> {
        let mut owned: *mut c_void = std::ptr::null_mut();
        // SAFETY: `value` is a live tensor handle of the caller.
        let status = unsafe { (self.new_handle)(value, &mut owned) };
        if status != 0 || owned.is_null() {
            return Err(PyRuntimeError::new_err(
                "aoti_torch_new_tensor_handle failed",
            ));
        }
        Ok(owned)
    }

    /// Python tensors taking over owning handles `tensors` (each freed by
    /// `steal`), in their order.
    fn steal_all<'py>(
        &self,
        py: Python<'py>,
        tensors: &[(usize, *mut c_void)],
    ) -> PyResult<Bound<'py, PyList>> {
        let capsules = PyList::empty(py);
        if tensors.is_empty() {
            return Ok(capsules);
        }
        for &(_, owned) in tensors {
            // SAFETY: a capsule holding the new handle, with no name and
            // no destructor: `steal` takes the handle over.
            let capsule = unsafe {
                Bound::from_owned_ptr_or_err(
                    py,
                    pyo3::ffi::PyCapsule_New(owned, std::ptr::null(), None),
                )
            }?;
            capsules.append(capsule)?;
        }
        Ok(self
            .steal
            .bind(py)
            .call1((capsules,))?
            .cast_into::<PyList>()?)
    }

    /// The current stream of the first CUDA tensor's device (the one the
    /// generated code launches on), or None on the host.
    fn stream(&self, py: Python<'_>, values: &Bound<'_, PyList>) -> PyResult<Option<u64>> {
        let Some(current) = self.current_stream.as_ref() else {
            return Ok(None);
        };
        for value in values.iter() {
            let Ok(get_device) = value.getattr(intern!(py, "get_device")) else {
                continue;
            };
            let device: i64 = get_device.call0()?.extract()?;
            if device >= 0 {
                return Ok(Some(current.bind(py).call1((device,))?.extract()?));
            }
        }
        Ok(None)
    }
}

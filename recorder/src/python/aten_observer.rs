//! Aten ops observed natively: the observer library (built from
//! `recorder/observer/aten_observer.cpp` against one torch version by
//! build.rs, carried in this extension) registers a thread-local
//! RecordFunction callback and hands each op a Python dispatch mode would
//! see to the [`AtenHook`] here, with no dispatch mode on the stack: torch
//! dispatches every op as it would unrecorded, and ops the recorder does
//! not record (views, ops under a recorded one, a tracer's) cost a
//! RecordFunction call and no Python at all.
//!
//! The library is loaded from memory (a `memfd`) after torch, whose
//! libraries it links to by name, and only where the running torch is the
//! one it was built for; elsewhere [`observer_status`] says why not, and
//! `tritontui.hooks.aten` records through its dispatch mode instead.
//!
//! Only the attaching thread and autograd's workers are observed: a
//! collective backend's workers inherit the callback too, and their ops
//! (gloo copying results out of its buffer) are the collective's own.
//!
//! The callbacks run on the op's thread with the GIL not held (torch
//! releases it around an op): a claimed op takes it to be described before
//! it runs and recorded after, as the mode does; an op on a thread inside a
//! recorded launch is let go before the GIL is taken.

use super::alive::ImplCalls;
use super::aten_hook::{AtenHook, Observation, Observed};
use super::aten_native::NativeObserved;
use super::dynamo_off::DynamoOff;
use super::intra_op;
use super::observed_values::{ValueCalls, Values};
use super::scalar::scalar;
use super::thread_state::in_launch;
use crate::phases::{Phase, timed};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use tritontui_trace::format::Scalar;

mod built {
    include!(concat!(env!("OUT_DIR"), "/aten_observer_library.rs"));
}

/// The interface version the library must have
/// (`tritontui_observer_abi`).
const ABI: c_int = 5;

/// A claimed op's start: `(core, op, inputs, count) -> token` (null: not
/// recorded).
type StartFn =
    unsafe extern "C" fn(*mut c_void, *const c_void, *const c_void, usize) -> *mut c_void;
/// A claimed op's end: `(core, token, outputs, count, raised)`.
type EndFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *const c_void, usize, c_int);
/// An optimizer's `step()` begins (1) or ends (0): `(core, begins)`.
type StepFn = unsafe extern "C" fn(*mut c_void, c_int);
/// Memory written where no op is recorded: `(core, spans, count)`, each
/// span an address and a length in bytes.
type ForgetFn = unsafe extern "C" fn(*mut c_void, *const u64, usize);

/// The library's entry points (see aten_observer.cpp).
struct Library {
    /// Kept loaded for the process's lifetime.
    _library: libloading::Library,
    attach: unsafe extern "C" fn(
        *mut c_void,
        StartFn,
        EndFn,
        StepFn,
        ForgetFn,
        c_int,
        *mut c_char,
        usize,
    ) -> u64,
    detach: unsafe extern "C" fn(u64),
    leave_out: unsafe extern "C" fn(*const c_void),
    op_python: unsafe extern "C" fn(*const c_void) -> *mut pyo3::ffi::PyObject,
    op_arguments: unsafe extern "C" fn(*const c_void) -> usize,
    arg_place: unsafe extern "C" fn(
        *const c_void,
        *const c_void,
        usize,
        usize,
        *mut *const c_char,
    ) -> c_int,
    arg_python: unsafe extern "C" fn(
        *const c_void,
        *const c_void,
        usize,
        *mut c_int,
    ) -> *mut pyo3::ffi::PyObject,
    value_python: unsafe extern "C" fn(*const c_void, usize) -> *mut pyo3::ffi::PyObject,
    arg_places: unsafe extern "C" fn(*const c_void, *const c_void, usize, *mut u8, usize) -> c_int,
    /// What reads a claimed op's values with no Python object made.
    values: ValueCalls,
}

/// The library, loaded at the first ask (torch imported by then), or why
/// it cannot be.
static LIBRARY: OnceLock<Result<Library, String>> = OnceLock::new();

/// The hook recording the ops claimed now: one recording at a time.
static HOOK: Mutex<Option<Py<AtenHook>>> = Mutex::new(None);

/// Whether claimed ops' values are read natively where they can be
/// (`TRITONTUI_ATEN_NATIVE=0`: never).
static NATIVE: AtomicBool = AtomicBool::new(true);

/// Where an argument goes in the call handed to the hook.
const POSITIONAL: c_int = 0;
const KEYWORD: c_int = 1;

/// The most arguments of a call read natively (more: through Python).
const MAX_ARGUMENTS: usize = 64;

/// Whether the native observer can record aten ops in this process, and
/// if not, why (a sentence).
#[pyfunction]
pub fn observer_status(py: Python<'_>) -> (bool, String) {
    match library(py) {
        Ok(_) => (true, String::new()),
        Err(why) => (false, why.clone()),
    }
}

fn library(py: Python<'_>) -> &'static Result<Library, String> {
    LIBRARY.get_or_init(|| {
        let (bytes, built_for) = built::BUILT.map_err(str::to_owned)?;
        let running = torch_release(py)?;
        if running != built_for {
            return Err(format!(
                "this build's native aten observer is for torch {built_for}, this is torch {running}"
            ));
        }
        load(bytes).map_err(|e| format!("the native aten observer does not load: {e}"))
    })
}

/// The running torch's release (`2.11.0` of `2.11.0+cu130`).
fn torch_release(py: Python<'_>) -> Result<String, String> {
    let version: String = py
        .import("torch")
        .and_then(|torch| torch.getattr("__version__"))
        .and_then(|v| v.str().map(|s| s.to_string()))
        .map_err(|e| format!("torch's version cannot be read: {e}"))?;
    Ok(version.split('+').next().unwrap_or_default().to_owned())
}

/// Loads the library from `bytes` through an anonymous file.
fn load(bytes: &[u8]) -> Result<Library, String> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    // SAFETY: a plain call with a NUL-terminated name.
    let fd = unsafe { libc::memfd_create(c"tritontui-aten-observer".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(format!("memfd_create: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: `fd` was just opened and is owned here.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(bytes).map_err(|e| e.to_string())?;
    let path = format!("/proc/self/fd/{fd}");
    // SAFETY: the library's initialisers only register nothing (it has no
    // static constructors of its own beyond the standard library's); the
    // torch libraries it links to are loaded already.
    let library = unsafe {
        libloading::os::unix::Library::open(
            Some(&path),
            libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL,
        )
    }
    .map_err(|e| e.to_string())?;
    let library = libloading::Library::from(library);
    /// Symbol `name` (NUL-terminated) of the library, as a `T`.
    ///
    /// SAFETY: the caller names the type aten_observer.cpp defines it with.
    unsafe fn symbol<T: Copy>(library: &libloading::Library, name: &[u8]) -> Result<T, String> {
        // SAFETY: as the caller promises.
        unsafe { library.get::<T>(name) }
            .map(|found| *found)
            .map_err(|e| e.to_string())
    }
    // SAFETY: each symbol is looked up with the type aten_observer.cpp
    // defines it with.
    unsafe {
        let abi: unsafe extern "C" fn() -> c_int = symbol(&library, b"tritontui_observer_abi\0")?;
        if abi() != ABI {
            return Err(format!("its interface is version {}, not {ABI}", abi()));
        }
        // Torch's intra-op threads, for the recorder's own host work.
        let parallel_for = symbol(&library, b"tritontui_observer_parallel_for\0")?;
        let found = Library {
            attach: symbol(&library, b"tritontui_observer_attach\0")?,
            detach: symbol(&library, b"tritontui_observer_detach\0")?,
            leave_out: symbol(&library, b"tritontui_observer_leave_out\0")?,
            op_python: symbol(&library, b"tritontui_observer_op_python\0")?,
            op_arguments: symbol(&library, b"tritontui_observer_op_arguments\0")?,
            arg_place: symbol(&library, b"tritontui_observer_arg_place\0")?,
            arg_python: symbol(&library, b"tritontui_observer_arg_python\0")?,
            value_python: symbol(&library, b"tritontui_observer_value_python\0")?,
            arg_places: symbol(&library, b"tritontui_observer_arg_places\0")?,
            values: ValueCalls {
                value_at: symbol(&library, b"tritontui_observer_value_at\0")?,
                kind: symbol(&library, b"tritontui_observer_kind\0")?,
                int: symbol(&library, b"tritontui_observer_int\0")?,
                double: symbol(&library, b"tritontui_observer_double\0")?,
                boolean: symbol(&library, b"tritontui_observer_bool\0")?,
                string: symbol(&library, b"tritontui_observer_string\0")?,
                list_length: symbol(&library, b"tritontui_observer_list_length\0")?,
                list_item: symbol(&library, b"tritontui_observer_list_item\0")?,
                settled_key: symbol(&library, b"tritontui_observer_settled_key\0")?,
                tensor: symbol(&library, b"tritontui_observer_tensor\0")?,
                tensor_impl: symbol(&library, b"tritontui_observer_tensor_impl\0")?,
                dtype_python: symbol(&library, b"tritontui_observer_dtype_python\0")?,
                modes: symbol(&library, b"tritontui_observer_modes\0")?,
                value_python: symbol(&library, b"tritontui_observer_value_python\0")?,
                tensors: ImplCalls {
                    retain: symbol(&library, b"tritontui_observer_tensor_retain\0")?,
                    release: symbol(&library, b"tritontui_observer_tensor_release\0")?,
                    python: symbol(&library, b"tritontui_observer_tensor_python\0")?,
                },
            },
            _library: library,
        };
        intra_op::offer(parallel_for);
        Ok(found)
    }
}

/// The native observer of one recording, attached to the thread that made
/// it (and the threads torch hands that thread's state to: autograd's
/// workers) until [`AtenObserver::detach`].
#[pyclass(module = "tritontui._native", frozen)]
pub struct AtenObserver {
    handle: Mutex<u64>,
}

#[pymethods]
impl AtenObserver {
    /// Attaches the observer, recording through `hook`, to this thread:
    /// aten ops and optimizer steps, or (without `ops`) optimizer steps
    /// alone; the values of ops read natively where they can be, unless
    /// not `native` (then every call is made Python objects).
    #[new]
    #[pyo3(signature = (hook, ops=true, native=true))]
    fn new(py: Python<'_>, hook: Py<AtenHook>, ops: bool, native: bool) -> PyResult<Self> {
        let library = library(py)
            .as_ref()
            .map_err(|why| PyRuntimeError::new_err(why.clone()))?;
        NATIVE.store(native, Ordering::Relaxed);
        *HOOK.lock().unwrap_or_else(|e| e.into_inner()) = Some(hook);
        let mut error = [0 as c_char; 256];
        // SAFETY: the callbacks have the types the library calls them with;
        // `error` is writable for its length.
        let handle = unsafe {
            (library.attach)(
                std::ptr::null_mut(),
                on_start,
                on_end,
                on_step,
                on_forget,
                c_int::from(ops),
                error.as_mut_ptr(),
                error.len(),
            )
        };
        if handle == 0 {
            HOOK.lock().unwrap_or_else(|e| e.into_inner()).take();
            // SAFETY: the library wrote a NUL-terminated message.
            let text = unsafe { CStr::from_ptr(error.as_ptr()) }.to_string_lossy();
            return Err(PyRuntimeError::new_err(format!(
                "the native aten observer cannot attach: {text}"
            )));
        }
        Ok(AtenObserver {
            handle: Mutex::new(handle),
        })
    }

    /// Stops observing (a second call does nothing): no op is claimed
    /// from now on; one claimed already is finished by the hook it started
    /// with.
    fn detach(&self, py: Python<'_>) {
        let handle = std::mem::take(&mut *self.handle.lock().unwrap_or_else(|e| e.into_inner()));
        if handle == 0 {
            return;
        }
        if let Ok(library) = library(py) {
            // SAFETY: `handle` came from this library's attach.
            unsafe { (library.detach)(handle) };
        }
        let hook = HOOK.lock().unwrap_or_else(|e| e.into_inner()).take();
        drop(hook);
    }
}

/// What a claimed op's start hands to its end.
struct Token {
    hook: Py<AtenHook>,
    claimed: Claimed,
}

/// How a claimed op was described before it ran.
enum Claimed {
    /// Its call made Python objects, as a dispatch mode sees it.
    Python(Box<Observed>),
    /// Its values read natively.
    Native(Box<NativeObserved>),
}

/// A claimed op before it runs: described by the hook when it is recorded.
unsafe extern "C" fn on_start(
    _core: *mut c_void,
    op: *const c_void,
    inputs: *const c_void,
    count: usize,
) -> *mut c_void {
    if in_launch() {
        return std::ptr::null_mut();
    }
    let _timed = timed(Phase::ObserverStart);
    catch_unwind(AssertUnwindSafe(|| {
        Python::attach(|py| {
            let hook = current_hook(py)?;
            let Ok(library) = library(py) else {
                return None;
            };
            let claimed = match observe(py, library, hook.get(), op, inputs, count) {
                Observation::Record(claimed) => claimed,
                Observation::NotRecorded => return None,
                Observation::NeverRecorded => {
                    // SAFETY: `op` is the library's, as it handed it.
                    unsafe { (library.leave_out)(op) };
                    return None;
                }
            };
            Some(Box::into_raw(Box::new(Token { hook, claimed })).cast::<c_void>())
        })
    }))
    .ok()
    .flatten()
    .unwrap_or(std::ptr::null_mut())
}

/// What the hook makes of a claimed op before it runs: its values read
/// natively where they can be, else its call made Python objects.
fn observe(
    py: Python<'_>,
    library: &'static Library,
    hook: &AtenHook,
    op: *const c_void,
    inputs: *const c_void,
    count: usize,
) -> Observation<Claimed> {
    // SAFETY: the library returns a borrowed reference, or null.
    let func = match unsafe { Bound::from_borrowed_ptr_or_err(py, (library.op_python)(op)) } {
        Ok(func) => func,
        Err(e) => {
            hook.fail(py, e);
            return Observation::NotRecorded;
        }
    };
    let values = Values {
        op,
        values: inputs,
        count,
    };
    let mut places = [0u8; MAX_ARGUMENTS];
    // SAFETY: `op` and `inputs` are the library's, for this call;
    // `places` is writable for its length.
    let placed = NATIVE.load(Ordering::Relaxed)
        && count <= MAX_ARGUMENTS
        && unsafe { (library.arg_places)(op, inputs, count, places.as_mut_ptr(), count) } != 0;
    if placed {
        let present = |index: usize| places[index] as c_int <= KEYWORD;
        let settled_text = |index: usize| settled_text(py, library, op, inputs, index);
        if let Some(observation) =
            hook.observe_native(py, &library.values, values, &func, present, settled_text)
        {
            return claimed(observation, Claimed::Native);
        }
    }
    let call = {
        let _timed = timed(Phase::ObserverCall);
        call_of(py, library, op, inputs, count)
    };
    match call {
        Ok((func, args, kwargs)) => claimed(
            hook.observe_start(py, &func, &args, kwargs.as_ref()),
            Claimed::Python,
        ),
        Err(e) => {
            hook.fail(py, e);
            Observation::NotRecorded
        }
    }
}

/// What was observed, its record (if any) claimed as `how` says.
fn claimed<R>(observation: Observation<R>, how: fn(R) -> Claimed) -> Observation<Claimed> {
    match observation {
        Observation::Record(record) => Observation::Record(how(record)),
        Observation::NotRecorded => Observation::NotRecorded,
        Observation::NeverRecorded => Observation::NeverRecorded,
    }
}

/// The trace's text for a dtype, layout, memory format or device
/// argument, asked of Python (once per value: `SettledTexts`).
fn settled_text(
    py: Python<'_>,
    library: &Library,
    op: *const c_void,
    inputs: *const c_void,
    index: usize,
) -> Option<String> {
    let _off = DynamoOff::enter(py);
    let value = arg_python(py, library, op, inputs, index).ok()?;
    match scalar(&value).ok()? {
        Scalar::Str(text) => Some(text),
        _ => None,
    }
}

/// A claimed op after it ran (or raised: then nothing is recorded).
unsafe extern "C" fn on_end(
    _core: *mut c_void,
    token: *mut c_void,
    outputs: *const c_void,
    count: usize,
    raised: c_int,
) {
    if token.is_null() {
        return;
    }
    let _timed = timed(Phase::ObserverEnd);
    // SAFETY: `token` is what on_start boxed, handed back once.
    let token = unsafe { Box::from_raw(token.cast::<Token>()) };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        Python::attach(|py| {
            let Token { hook, claimed } = *token;
            if raised != 0 {
                return;
            }
            let Ok(library) = library(py) else {
                return;
            };
            match claimed {
                Claimed::Native(observed) => {
                    let outputs = Values {
                        op: std::ptr::null(),
                        values: outputs,
                        count,
                    };
                    hook.get()
                        .observe_native_end(py, &library.values, observed, outputs);
                }
                Claimed::Python(observed) => {
                    let out = {
                        let _timed = timed(Phase::ObserverResults);
                        returned(py, library, outputs, count)
                    };
                    match out {
                        Ok(out) => hook.get().observe_end(py, observed, &out),
                        Err(e) => hook.get().fail(py, e),
                    }
                }
            }
        })
    }));
}

/// The hook recording now, if any.
fn current_hook(py: Python<'_>) -> Option<Py<AtenHook>> {
    HOOK.lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map(|h| h.clone_ref(py))
}

/// An optimizer's `step()` begins or ends on this thread.
unsafe extern "C" fn on_step(_core: *mut c_void, begins: c_int) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        Python::attach(|py| {
            if let Some(hook) = current_hook(py) {
                hook.get().optimizer_step(py, begins != 0);
            }
        })
    }));
}

/// Memory an op run with dispatch modes kept out may have written,
/// inside an optimizer step: told after it ran.
unsafe extern "C" fn on_forget(_core: *mut c_void, spans: *const u64, count: usize) {
    let words = if spans.is_null() {
        &[][..]
    } else {
        // SAFETY: the library hands `count` pairs of words.
        unsafe { std::slice::from_raw_parts(spans, count * 2) }
    };
    let spans: Vec<(u64, u64)> = words.chunks_exact(2).map(|w| (w[0], w[1])).collect();
    let _ = catch_unwind(AssertUnwindSafe(|| {
        Python::attach(|py| {
            if let Some(hook) = current_hook(py) {
                hook.get().forget(py, &spans);
            }
        })
    }));
}

/// An op's `OpOverload`, positional arguments and keyword arguments (None:
/// none), as torch hands them to `__torch_dispatch__`.
type DispatchCall<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyTuple>,
    Option<Bound<'py, PyDict>>,
);

/// Op `op`'s call as torch hands it to `__torch_dispatch__`.
fn call_of<'py>(
    py: Python<'py>,
    library: &Library,
    op: *const c_void,
    inputs: *const c_void,
    count: usize,
) -> PyResult<DispatchCall<'py>> {
    // SAFETY: the library returns a borrowed reference, or null.
    let func = unsafe { Bound::from_borrowed_ptr_or_err(py, (library.op_python)(op)) }?;
    let mut args = Vec::new();
    let kwargs = PyDict::new(py);
    // SAFETY: `op` and `inputs` are the library's, for this call.
    let arguments = unsafe { (library.op_arguments)(op) };
    for index in 0..arguments.min(count) {
        let mut name: *const c_char = std::ptr::null();
        // SAFETY: as above; `name` is set to the schema's own string.
        let place = unsafe { (library.arg_place)(op, inputs, count, index, &mut name) };
        if place != POSITIONAL && place != KEYWORD {
            continue;
        }
        let value = arg_python(py, library, op, inputs, index)?;
        if place == POSITIONAL {
            args.push(value);
        } else {
            // SAFETY: the schema's NUL-terminated argument name.
            let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
            kwargs.set_item(name.as_ref(), value)?;
        }
    }
    let kwargs = (!kwargs.is_empty()).then_some(kwargs);
    Ok((func, PyTuple::new(py, args)?, kwargs))
}

/// Argument `index` of op `op`'s call as torch hands it to Python.
fn arg_python<'py>(
    py: Python<'py>,
    library: &Library,
    op: *const c_void,
    inputs: *const c_void,
    index: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let mut borrowed: c_int = 0;
    // SAFETY: `op` and `inputs` are the library's, for this call; it
    // returns a new reference, or a borrowed one where `borrowed` says.
    unsafe {
        let raw = (library.arg_python)(op, inputs, index, &mut borrowed);
        if borrowed != 0 {
            Bound::from_borrowed_ptr_or_err(py, raw)
        } else {
            Bound::from_owned_ptr_or_err(py, raw)
        }
    }
}

/// What the op returned, as Python sees it: None for nothing, the value
/// for one, a tuple for more.
fn returned<'py>(
    py: Python<'py>,
    library: &Library,
    outputs: *const c_void,
    count: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let mut values = Vec::with_capacity(count);
    for index in 0..count {
        // SAFETY: a new reference to output `index`, or null.
        values.push(unsafe {
            Bound::from_owned_ptr_or_err(py, (library.value_python)(outputs, index))
        }?);
    }
    Ok(match values.len() {
        0 => py.None().into_bound(py),
        1 => values.remove(0),
        _ => PyTuple::new(py, values)?.into_any(),
    })
}

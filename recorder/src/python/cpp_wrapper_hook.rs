//! The C entry point that graphs generated with a C++ wrapper call around
//! each launch (`torch._inductor.config.cpp_wrapper`, AOTInductor
//! packages), while the recorder's codegen hooks are in
//! (`tritontui.hooks.cpp_wrapper`).
//!
//! Generated code declares `tritontui_launch` as a weak `extern "C"`
//! symbol and calls it only when it resolved: a module loaded without
//! this extension in the global scope (no recorder) runs as the stock
//! one. This extension exports the symbol; the Python side makes it
//! global before any hooked module loads and binds a callback here.
//!
//! Each call passes a site (a static string the codegen wrote: the
//! kernel's kind, name, one code per value and the values' names), the
//! phase (0 before the launch, 1 after) and the values: tensor handles
//! (`AtenTensorHandle`, that is `at::Tensor*`), integers and floats
//! carried in the pointer's bits. Tensors are handed to Python as new
//! tensors sharing the handle's storage (a new handle, stolen by
//! `torch._C._aoti.alloc_tensor_by_stealing_from_void_ptr`), so that the
//! launch is described and hashed exactly as the Python wrapper's.

use pyo3::prelude::*;
use pyo3::types::PyList;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// `aoti_torch_new_tensor_handle(AtenTensorHandle, AtenTensorHandle*)`.
type NewHandle = unsafe extern "C" fn(*mut c_void, *mut *mut c_void) -> i32;

/// What a bound recorder gets each call with.
struct Binding {
    /// `callback(site address: int, phase: int, values: list)`.
    callback: Py<PyAny>,
    /// Makes a Python tensor of an owning handle.
    steal: Py<PyAny>,
    new_handle: NewHandle,
}

/// Whether a recorder is bound: checked before anything else, so that a
/// hooked module run with no recording costs a load and a branch.
static ON: AtomicBool = AtomicBool::new(false);
static BOUND: Mutex<Option<Binding>> = Mutex::new(None);
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

/// One value code of a site: the access of a tensor (`i`, `o`, `x`, `r`
/// returned by the call), or a scalar (`n` integer, `f` float).
fn is_tensor(code: u8) -> bool {
    matches!(code, b'i' | b'o' | b'x' | b'r')
}

/// Binds the recorder: `callback(site address, phase, values)` is called for
/// each launch of a hooked graph; `steal` is
/// `torch._C._aoti.alloc_tensor_by_stealing_from_void_ptr`; `new_handle`
/// the address of `aoti_torch_new_tensor_handle`.
#[pyfunction]
pub fn cpp_wrapper_bind(callback: Py<PyAny>, steal: Py<PyAny>, new_handle: usize) -> PyResult<()> {
    if new_handle == 0 {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "aoti_torch_new_tensor_handle has no address",
        ));
    }
    // SAFETY: the caller passes the address of torch's exported
    // `aoti_torch_new_tensor_handle`, whose C signature is NewHandle.
    let new_handle = unsafe { std::mem::transmute::<usize, NewHandle>(new_handle) };
    let mut bound = BOUND.lock().unwrap_or_else(|e| e.into_inner());
    *bound = Some(Binding {
        callback,
        steal,
        new_handle,
    });
    ON.store(true, Ordering::Release);
    Ok(())
}

/// Unbinds the recorder: later calls return at once.
#[pyfunction]
pub fn cpp_wrapper_unbind() {
    ON.store(false, Ordering::Release);
    let taken = BOUND.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(taken) = taken {
        Python::attach(|_| drop(taken));
    }
}

/// How many times generated code called in (bound or not).
#[pyfunction]
pub fn cpp_wrapper_calls() -> u64 {
    CALLS.load(Ordering::Relaxed)
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
    let site = unsafe { CStr::from_ptr(site) }.to_bytes();
    let Some(codes) = site.split(|&b| b == 0x1f).nth(2) else {
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
            if let Err(e) = call(py, address, phase, codes, values) {
                // The callback catches its own errors: this one came
                // before it ran.
                report_once(py, e);
            }
        })
    }));
}

/// Calls the bound callback with the site's address (its text is read
/// and cached on the Python side), the phase and the values.
fn call(
    py: Python<'_>,
    address: usize,
    phase: c_int,
    codes: &[u8],
    values: &[*mut c_void],
) -> PyResult<()> {
    let (callback, steal, new_handle) = {
        let bound = BOUND.lock().unwrap_or_else(|e| e.into_inner());
        let Some(bound) = bound.as_ref() else {
            return Ok(());
        };
        (
            bound.callback.clone_ref(py),
            bound.steal.clone_ref(py),
            bound.new_handle,
        )
    };
    let list = PyList::empty(py);
    for (&code, &value) in codes.iter().zip(values) {
        match code {
            // A returned tensor exists only after the call.
            b'r' if phase == 0 => list.append(py.None())?,
            c if is_tensor(c) => {
                if value.is_null() {
                    list.append(py.None())?;
                    continue;
                }
                let mut owned: *mut c_void = std::ptr::null_mut();
                // SAFETY: `value` is a live tensor handle of the caller.
                let status = unsafe { new_handle(value, &mut owned) };
                if status != 0 || owned.is_null() {
                    list.append(py.None())?;
                    continue;
                }
                // SAFETY: a capsule holding the new handle, with no name
                // and no destructor: `steal` takes the handle over.
                let capsule = unsafe {
                    Bound::from_owned_ptr_or_err(
                        py,
                        pyo3::ffi::PyCapsule_New(owned, std::ptr::null(), None),
                    )
                }?;
                match steal.bind(py).call1((capsule,)) {
                    Ok(tensor) => list.append(tensor)?,
                    // Described as absent; the first such error is shown.
                    Err(e) => {
                        report_once(py, e);
                        list.append(py.None())?;
                    }
                }
            }
            b'n' => list.append(value as i64)?,
            b'f' => list.append(f64::from_bits(value as u64))?,
            _ => list.append(py.None())?,
        }
    }
    callback.bind(py).call1((address, phase, list))?;
    Ok(())
}

//! What keeps a described tensor alive while its hashes wait: its Python
//! object, or, for a tensor the native aten observer read with no Python
//! object made, a reference to its `TensorImpl` taken through the
//! observer library (`observer/values.cpp`).

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::ffi::c_void;
use std::ptr::NonNull;

/// The observer library's calls on a `TensorImpl`.
pub struct ImplCalls {
    /// Takes a new reference.
    pub retain: unsafe extern "C" fn(*mut c_void),
    /// Lets one go.
    pub release: unsafe extern "C" fn(*mut c_void),
    /// The tensor as a Python object (a new reference; null on an
    /// error). The caller holds the GIL.
    pub python: unsafe extern "C" fn(*mut c_void) -> *mut c_void,
}

/// One reference to a `TensorImpl`, let go when dropped.
pub struct ImplRef {
    tensor: NonNull<c_void>,
    calls: &'static ImplCalls,
}

// SAFETY: a `TensorImpl`'s reference count is atomic: a reference may be
// taken, moved and let go on any thread.
unsafe impl Send for ImplRef {}
// SAFETY: as above; nothing else is reached through a shared reference.
unsafe impl Sync for ImplRef {}

impl ImplRef {
    /// A new reference to `tensor`.
    ///
    /// # Safety
    /// `tensor` is a live `TensorImpl` and `calls` the library's calls.
    pub unsafe fn new(tensor: NonNull<c_void>, calls: &'static ImplCalls) -> ImplRef {
        // SAFETY: as the caller promises.
        unsafe { (calls.retain)(tensor.as_ptr()) };
        ImplRef { tensor, calls }
    }
}

impl Drop for ImplRef {
    fn drop(&mut self) {
        // SAFETY: this reference was taken in `new` and is let go once.
        unsafe { (self.calls.release)(self.tensor.as_ptr()) };
    }
}

/// What keeps one tensor alive.
pub enum Alive {
    /// Its Python object.
    Python(Py<PyAny>),
    /// A reference to its `TensorImpl`.
    Native(ImplRef),
}

impl Alive {
    /// Another token keeping the same tensor alive.
    pub fn clone_ref(&self, py: Python<'_>) -> Alive {
        match self {
            Alive::Python(object) => Alive::Python(object.clone_ref(py)),
            // SAFETY: the tensor is alive while `reference` holds it.
            Alive::Native(reference) => {
                Alive::Native(unsafe { ImplRef::new(reference.tensor, reference.calls) })
            }
        }
    }

    /// The tensor as a Python object (made for one read natively).
    pub fn python<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Alive::Python(object) => Ok(object.bind(py).clone()),
            Alive::Native(reference) => {
                // SAFETY: the tensor is alive while `reference` holds it;
                // the call returns a new reference, or null.
                let made = unsafe { (reference.calls.python)(reference.tensor.as_ptr()) };
                // SAFETY: a new reference to a Python object, or null.
                unsafe { Bound::from_owned_ptr_or_opt(py, made.cast()) }.ok_or_else(|| {
                    PyRuntimeError::new_err("a tensor read natively cannot be made a Python object")
                })
            }
        }
    }
}

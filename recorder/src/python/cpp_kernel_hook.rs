//! Inductor's C++ kernels on the CPU (`cpp_fused_*`), each replaced in its
//! wrapper module by a native callable, so that recording a launch adds no
//! Python frame to it (see `tritontui.hooks.cpp`).
//!
//! What is fixed per session (whether it records the kernel, the access
//! codes of a call with so many arguments, the kernel's id) comes from
//! the kernel's Python description once and is cached here; a launch then
//! costs one describe before the kernel and one launch record after it.
//! Errors go to the session's `fail`, which stops recording; the kernel
//! itself always runs, once.

use super::describe::Described;
use super::hook_session::{HookSession, poisoned};
use super::stand_in::{StandIn, stand_in};
use crate::phases::Phase;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rustc_hash::FxHashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// What one session decided for the kernel.
struct Fixed {
    /// The session, kept alive so that its address names it.
    session_object: Py<PyAny>,
    session: HookSession,
    /// The kernel's name (`cpp_fused_...`).
    name: String,
    wanted: bool,
    /// Access codes by the number of arguments a call passes.
    codes: Mutex<FxHashMap<usize, Arc<Vec<u8>>>>,
    kernel: OnceLock<u64>,
}

/// One C++ kernel of a wrapper module, recording each call.
#[pyclass(module = "tritontui._native", frozen)]
pub struct CppKernelHook {
    /// The kernel replaced (a builtin of the kernel's module).
    kernel: Py<PyAny>,
    /// Its Python description (`tritontui.hooks.cpp.CppKernel`): `name`,
    /// `wanted(session)`, `codes(count)`, `define(session)`.
    info: Py<PyAny>,
    /// `tritontui._active`, whose `_ACTIVE` says which session records.
    active: Py<PyAny>,
    last: Mutex<Option<Arc<Fixed>>>,
}

#[pymethods]
impl CppKernelHook {
    #[new]
    fn new(py: Python<'_>, kernel: Py<PyAny>, info: Py<PyAny>) -> PyResult<Self> {
        Ok(CppKernelHook {
            kernel,
            info,
            active: py.import("tritontui._active")?.unbind().into_any(),
            last: Mutex::new(None),
        })
    }

    /// The kernel this records.
    #[getter]
    fn kernel(&self, py: Python<'_>) -> Py<PyAny> {
        self.kernel.clone_ref(py)
    }

    #[pyo3(signature = (*args))]
    fn __call__(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let session = self.active.bind(py).getattr(intern!(py, "_ACTIVE"))?;
        if session.is_none() {
            return Ok(self.run(py, args)?.unbind());
        }
        let call = KernelCall {
            hook: self,
            session: &session,
            args,
        };
        stand_in(py, &call)
    }
}

/// One call of the kernel while a session records.
struct KernelCall<'a, 'py> {
    hook: &'a CppKernelHook,
    session: &'a Bound<'py, PyAny>,
    args: &'a Bound<'py, PyTuple>,
}

impl<'py> StandIn<'py> for KernelCall<'_, 'py> {
    /// What the session decided for the kernel, and the call's arguments
    /// described.
    type Prepared = (Arc<Fixed>, Described);

    const PHASES: (Phase, Phase) = (Phase::CppKernelHook, Phase::CppKernelRun);

    const LAUNCH: bool = true;

    fn prepare(&self, py: Python<'py>) -> PyResult<Option<Self::Prepared>> {
        self.hook.prepare(py, self.session, self.args)
    }

    fn run(
        &self,
        py: Python<'py>,
        _prepared: Option<&Self::Prepared>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.hook.run(py, self.args)
    }

    fn finish(
        &self,
        py: Python<'py>,
        (fixed, mut described): Self::Prepared,
        _result: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let kernel = self.hook.kernel_id(py, &fixed)?;
        fixed
            .session
            .after(py, &mut described, None, kernel, Vec::new(), 0)
    }

    fn fail(&self, py: Python<'py>, error: PyErr) {
        // `fail` warns once and stops recording (if even that fails there
        // is nothing left to tell).
        let _ = self.session.call_method1(intern!(py, "fail"), (error,));
    }
}

impl CppKernelHook {
    /// The kernel replaced, called once.
    fn run<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
        self.kernel.bind(py).call1(args)
    }

    /// What `session` decided for this kernel, with the call's arguments
    /// described; None when the kernel is not recorded, or its arguments
    /// could not be described (a gap in the trace).
    fn prepare(
        &self,
        py: Python<'_>,
        session: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
    ) -> PyResult<Option<(Arc<Fixed>, Described)>> {
        let fixed = self.fixed(py, session)?;
        if !fixed.wanted {
            return Ok(None);
        }
        let described = self.codes(py, &fixed, args.len()).and_then(|codes| {
            fixed.session.before(
                py,
                args.as_any(),
                &codes,
                fixed.session.options.hash_inputs,
                None,
                &fixed.name,
            )
        });
        match described {
            Ok(described) => Ok(Some((fixed, described))),
            Err(e) => {
                fixed.session.unrecorded(py, &fixed.name, e);
                Ok(None)
            }
        }
    }

    /// What `session` decided: cached, or asked at its first call.
    fn fixed(&self, py: Python<'_>, session: &Bound<'_, PyAny>) -> PyResult<Arc<Fixed>> {
        if let Some(last) = self.last.lock().map_err(poisoned)?.as_ref()
            && last.session_object.bind(py).is(session)
        {
            return Ok(Arc::clone(last));
        }
        let info = self.info.bind(py);
        let wanted: bool = info
            .call_method1(intern!(py, "wanted"), (session,))?
            .extract()?;
        let fixed = Arc::new(Fixed {
            session_object: session.clone().unbind(),
            session: HookSession::new(py, session.clone().unbind())?,
            name: info.getattr(intern!(py, "name"))?.extract()?,
            wanted,
            codes: Mutex::new(FxHashMap::default()),
            kernel: OnceLock::new(),
        });
        *self.last.lock().map_err(poisoned)? = Some(Arc::clone(&fixed));
        Ok(fixed)
    }

    /// The access codes of a call with `count` arguments.
    fn codes(&self, py: Python<'_>, fixed: &Fixed, count: usize) -> PyResult<Arc<Vec<u8>>> {
        if let Some(codes) = fixed.codes.lock().map_err(poisoned)?.get(&count) {
            return Ok(Arc::clone(codes));
        }
        let codes: Vec<u8> = self
            .info
            .bind(py)
            .call_method1(intern!(py, "codes"), (count,))?
            .extract()?;
        let codes = Arc::new(codes);
        fixed
            .codes
            .lock()
            .map_err(poisoned)?
            .insert(count, Arc::clone(&codes));
        Ok(codes)
    }

    /// The kernel's id in the session's trace, defined the first time.
    fn kernel_id(&self, py: Python<'_>, fixed: &Fixed) -> PyResult<u64> {
        if let Some(&kernel) = fixed.kernel.get() {
            return Ok(kernel);
        }
        let kernel: u64 = self
            .info
            .bind(py)
            .call_method1(intern!(py, "define"), (fixed.session.python.bind(py),))?
            .extract()?;
        Ok(*fixed.kernel.get_or_init(|| kernel))
    }
}

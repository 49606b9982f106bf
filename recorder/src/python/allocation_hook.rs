//! The buffer allocators of Inductor's generated wrapper
//! (`empty_strided_cuda` and the like), replaced in each wrapper module by
//! a native callable: a compiled graph call allocates most of its
//! buffers this way, and a Python frame per allocation showed in the step
//! time. Each buffer handed out while a session records aten ops becomes
//! a launch of a kernel marked `allocates` (see
//! `tritontui.hooks.wrapper_allocations`).

use super::dynamo_off::DynamoOff;
use super::recording_options::{After, HookOptions};
use super::thread_state::{in_launch, thread_id};
use super::trace_file::TraceFile;
use crate::phases::{Phase, timed};
use pyo3::exceptions::PyRuntimeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::sync::Mutex;

/// One allocator of a wrapper module, recording what it hands out.
#[pyclass(module = "tritontui._native", frozen)]
pub struct AllocationHook {
    /// The allocator's name in the wrapper (`empty_strided_cuda`).
    name: String,
    /// The allocator replaced.
    original: Py<PyAny>,
    /// `tritontui._active`, whose `_ACTIVE` says which session records.
    active: Py<PyAny>,
    /// `tritontui.hooks.wrapper_allocations`: `kernel(session, name)`.
    helpers: Py<PyAny>,
    /// The session last seen, with its trace and the kernel id of this
    /// allocator in it (None when it records no allocations).
    last: Mutex<Option<Seen>>,
}

struct Seen {
    session: Py<PyAny>,
    trace: Py<TraceFile>,
    kernel: Option<u64>,
    /// The session has pause points: each allocation asks it first.
    pauses: bool,
}

#[pymethods]
impl AllocationHook {
    #[new]
    fn new(
        name: String,
        original: Py<PyAny>,
        helpers: Py<PyAny>,
        py: Python<'_>,
    ) -> PyResult<Self> {
        Ok(AllocationHook {
            name,
            original,
            active: py.import("tritontui._active")?.unbind().into_any(),
            helpers,
            last: Mutex::new(None),
        })
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let _timed = timed(Phase::AllocationHook);
        let buffer = {
            let _timed = timed(Phase::AllocationRun);
            self.original.bind(py).call(args, kwargs)?
        };
        if in_launch() {
            return Ok(buffer.unbind());
        }
        let session = self.active.bind(py).getattr(intern!(py, "_ACTIVE"))?;
        if session.is_none() {
            return Ok(buffer.unbind());
        }
        let _off = DynamoOff::enter(py);
        if let Err(e) = self.record(py, &session, &buffer) {
            // `fail` warns once and stops recording.
            let _ = session.call_method1(intern!(py, "fail"), (e,));
        }
        Ok(buffer.unbind())
    }
}

impl AllocationHook {
    /// Writes the launch that hands `buffer` out, if `session` records it.
    fn record(
        &self,
        py: Python<'_>,
        session: &Bound<'_, PyAny>,
        buffer: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let Some((trace, kernel, pauses)) = self.kernel(py, session)? else {
            return Ok(());
        };
        if pauses {
            // Stops here when a pause point names this launch (the buffer
            // is handed out, its record not yet written).
            session.call_method1(intern!(py, "before_launch"), (&self.name,))?;
        }
        let trace = trace.get();
        let empty = PyList::empty(py);
        let mut described = trace.describe(
            py,
            empty.as_any(),
            b"",
            false,
            false,
            None,
            false,
            false,
            false,
        )?;
        let buffers = PyList::new(py, [buffer])?;
        trace.extend(py, &mut described, buffers.as_any(), b"a")?;
        trace.launch(
            py,
            &mut described,
            kernel,
            Vec::new(),
            0,
            thread_id(),
            After::NOTHING,
        )?;
        Ok(())
    }

    /// The session's trace and this allocator's kernel in it: cached for
    /// the session last seen, else asked of Python.
    fn kernel(
        &self,
        py: Python<'_>,
        session: &Bound<'_, PyAny>,
    ) -> PyResult<Option<(Py<TraceFile>, u64, bool)>> {
        let lock = || {
            self.last
                .lock()
                .map_err(|_| PyRuntimeError::new_err("poisoned lock"))
        };
        if let Some(seen) = lock()?
            .as_ref()
            .filter(|seen| seen.session.bind(py).is(session))
        {
            return Ok(seen
                .kernel
                .map(|k| (seen.trace.clone_ref(py), k, seen.pauses)));
        }
        // Asked with the lock released: Python may let another thread in.
        let kernel: Option<u64> = self
            .helpers
            .bind(py)
            .call_method1(intern!(py, "kernel"), (session, &self.name))?
            .extract()?;
        let trace: Py<TraceFile> = session.getattr(intern!(py, "file"))?.extract()?;
        let pauses = HookOptions::of(session)?.pauses;
        *lock()? = Some(Seen {
            session: session.clone().unbind(),
            trace: trace.clone_ref(py),
            kernel,
            pauses,
        });
        Ok(kernel.map(|k| (trace, k, pauses)))
    }
}

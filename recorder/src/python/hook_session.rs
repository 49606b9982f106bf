//! What the native hooks (`TritonHook`, `AtenHook`) share: the session
//! they record into, its choices fixed when recording starts, and the
//! two calls around a recorded launch (describe before it, write the
//! record after it). Errors go to the session's `fail`, which warns once
//! and stops recording.

use super::describe::{Described, Read};
use super::dynamo_off::DynamoOff;
use super::recording_options::HookOptions;
use super::thread_state::thread_id;
use super::trace_file::TraceFile;
use pyo3::exceptions::PyRuntimeError;
use pyo3::intern;
use pyo3::prelude::*;

/// The session a native hook records into.
pub struct HookSession {
    /// The Python session (for `fail`, `before_launch`, `gpu_failed`,
    /// `device_hashing`, and the hooks' helpers).
    pub python: Py<PyAny>,
    trace: Py<TraceFile>,
    /// What the session's options ask of the hooks.
    pub options: HookOptions,
}

impl HookSession {
    /// Reads the session's `file` and its typed `hook_options` now
    /// (`device_hashing` at every launch).
    pub fn new(py: Python<'_>, session: Py<PyAny>) -> PyResult<HookSession> {
        let s = session.bind(py);
        Ok(HookSession {
            trace: s.getattr("file")?.extract()?,
            options: HookOptions::of(s)?,
            python: session,
        })
    }

    /// Whether a compiled graph's call is running: the settings it was
    /// called with are in force for every launch it makes.
    pub fn in_graph_call(&self, py: Python<'_>) -> bool {
        self.trace.get().in_graph_call(py)
    }

    /// An optimizer's `step()` begins or ends on this thread
    /// ([`TraceFile::optimizer_step`]).
    pub fn optimizer_step(&self, py: Python<'_>, begins: bool) -> PyResult<()> {
        self.trace.get().optimizer_step(py, begins)
    }

    /// An optimizer's `step()` began (the outermost): the session knows
    /// its host reads are the optimizer's own until the step ends.
    pub fn optimizer_step_began(&self, py: Python<'_>) -> PyResult<()> {
        self.python
            .bind(py)
            .call_method0(intern!(py, "optimizer_step_began"))
            .map(drop)
    }

    /// A training step ended (`by` what): the session writes its `step`
    /// record, its fingerprints, and begins or ends a window of steps
    /// recorded in full.
    pub fn step_ended(&self, py: Python<'_>, by: &str) -> PyResult<()> {
        self.python
            .bind(py)
            .call_method1(intern!(py, "step_ended"), (by,))
            .map(drop)
    }

    /// Memory written where no launch records it ([`TraceFile::forget`]).
    pub fn forget(&self, py: Python<'_>, spans: &[(u64, u64)]) -> PyResult<()> {
        self.trace.get().forget(py, spans)
    }

    /// Hands `error` to the session, which warns once and stops recording
    /// (if even that fails there is nothing left to tell).
    pub fn fail(&self, py: Python<'_>, error: PyErr) {
        let _ = self
            .python
            .bind(py)
            .call_method1(intern!(py, "fail"), (error,));
    }

    /// Lets a launch of `kernel` whose arguments could not be described
    /// (`error`) run unrecorded, a gap in the trace in its place (the
    /// session stops recording if even that cannot be written).
    pub fn unrecorded(&self, py: Python<'_>, kernel: &str, error: PyErr) {
        let said = self
            .python
            .bind(py)
            .call_method1(intern!(py, "launch_unrecorded"), (kernel, error.value(py)));
        if let Err(e) = said {
            self.fail(py, e);
        }
    }

    /// Describes a launch's arguments before it runs (hashing them when
    /// `hash_pre`, on `stream`), lets the session observe them (copy them,
    /// hash them with the program's own function) when it observes this
    /// launch, then stops at a pause point naming `kernel` if there
    /// is one.
    pub fn before(
        &self,
        py: Python<'_>,
        values: &Bound<'_, PyAny>,
        codes: &[u8],
        hash_pre: bool,
        stream: Option<u64>,
        kernel: &str,
    ) -> PyResult<Described> {
        let session = self.python.bind(py);
        let device_hashing = self.device_hashing(py)?;
        let mut described = self.trace.get().describe(
            py,
            values,
            codes,
            hash_pre,
            device_hashing,
            stream,
            true,
            true,
            false,
        )?;
        if self.options.observes {
            let taken =
                session.call_method1(intern!(py, "observe_before"), (kernel, values, codes))?;
            described.observed = (!taken.is_none()).then(|| taken.unbind());
        }
        if self.options.pauses {
            session.call_method1(intern!(py, "before_launch"), (kernel,))?;
        }
        Ok(described)
    }

    /// Writes the launch record after the launch, `results` (new tensors
    /// with their access codes) added to its arguments, and hands what
    /// was observed before it to the session to finish.
    pub fn after(
        &self,
        py: Python<'_>,
        described: &mut Described,
        results: Option<(&Bound<'_, PyAny>, &[u8])>,
        kernel: u64,
        grid: Vec<u64>,
        stream: u64,
    ) -> PyResult<()> {
        let trace = self.trace.get();
        if let Some((values, codes)) = results {
            trace.extend(py, described, values, codes)?;
        }
        let seq = self.record(py, described, kernel, grid, stream)?;
        if let Some(taken) = described.observed.take() {
            let results = results.map(|(values, _)| values);
            self.python
                .bind(py)
                .call_method1(intern!(py, "observe_after"), (taken, seq, results))?;
        }
        self.said_gpu_failed(py, described)
    }

    /// Describes an aten op's arguments read natively before it runs, as
    /// [`HookSession::before`] does (the session neither observes nor
    /// pauses at its launches: else the op is read through Python).
    pub fn before_reads<'py>(
        &self,
        py: Python<'py>,
        reads: Vec<Read<'py>>,
        codes: &[u8],
        hash_pre: bool,
    ) -> PyResult<Described> {
        let device_hashing = self.device_hashing(py)?;
        self.trace.get().describe_reads(
            py,
            reads.into_iter().map(Ok),
            codes,
            hash_pre,
            device_hashing,
            None,
            true,
            true,
            false,
        )
    }

    /// Writes the launch record of an aten op read natively, its new
    /// tensors `results` (with their access codes) added to its arguments.
    pub fn after_reads<'py>(
        &self,
        py: Python<'py>,
        described: &mut Described,
        results: Vec<Read<'py>>,
        codes: &[u8],
        kernel: u64,
    ) -> PyResult<()> {
        self.trace
            .get()
            .extend_reads(py, described, results.into_iter().map(Ok), codes)?;
        self.record(py, described, kernel, Vec::new(), 0)?;
        self.said_gpu_failed(py, described)
    }

    /// Whether device hashing is on: the session turns it off when it
    /// fails anywhere.
    fn device_hashing(&self, py: Python<'_>) -> PyResult<bool> {
        self.python
            .bind(py)
            .getattr(intern!(py, "device_hashing"))?
            .extract()
    }

    /// The launch record, queued; its sequence number.
    fn record(
        &self,
        py: Python<'_>,
        described: &mut Described,
        kernel: u64,
        grid: Vec<u64>,
        stream: u64,
    ) -> PyResult<u64> {
        self.trace.get().launch(
            py,
            described,
            kernel,
            grid,
            stream,
            thread_id(),
            self.options.after,
        )
    }

    /// Tells the session that device hashing failed during the launch,
    /// if it did.
    fn said_gpu_failed(&self, py: Python<'_>, described: &Described) -> PyResult<()> {
        if let Some(error) = described.gpu_error() {
            let _off = DynamoOff::enter(py);
            self.python
                .bind(py)
                .call_method1(intern!(py, "gpu_failed"), (error,))?;
        }
        Ok(())
    }
}

/// The error of a lock a panicking thread held.
pub fn poisoned<T>(_: T) -> PyErr {
    PyRuntimeError::new_err("poisoned lock")
}

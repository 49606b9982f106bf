//! The one way a native hook stands in for the call it replaced (a
//! Triton launch, a C++ kernel, an eager aten op): prepare the call with
//! Dynamo off, run the original once, then write what was prepared with
//! Dynamo off again. An error of the recorder's goes to the session, which
//! warns once and stops recording, and the call still runs; an error of
//! the original call is the program's, raised as it would be unrecorded.

use super::dynamo_off::DynamoOff;
use super::thread_state::Inside;
use crate::phases::{Phase, timed};
use pyo3::prelude::*;

/// One call a native hook stands in for.
pub(super) trait StandIn<'py> {
    /// What is prepared before the call and finished after it (the
    /// call's arguments, described).
    type Prepared;

    /// The phases timing the whole hook and the original call inside it.
    const PHASES: (Phase, Phase);

    /// Whether a prepared call counts as a recorded launch on its thread
    /// while it runs: what torch does inside it (allocations, launches)
    /// belongs to it and is not recorded again.
    const LAUNCH: bool;

    /// Prepares the call before it runs; None: it runs unrecorded.
    fn prepare(&self, py: Python<'py>) -> PyResult<Option<Self::Prepared>>;

    /// Runs the original call once, with what was prepared for it.
    fn run(
        &self,
        py: Python<'py>,
        prepared: Option<&Self::Prepared>,
    ) -> PyResult<Bound<'py, PyAny>>;

    /// Whether [`StandIn::finish`] has anything to do with what was
    /// prepared (when not, Dynamo is not turned off and on for it).
    fn finishes(_prepared: &Self::Prepared) -> bool {
        true
    }

    /// Finishes what was prepared now that the call returned `result`.
    fn finish(
        &self,
        py: Python<'py>,
        prepared: Self::Prepared,
        result: &Bound<'py, PyAny>,
    ) -> PyResult<()>;

    /// Hands a recorder's error to the session, which warns once and stops
    /// recording.
    fn fail(&self, py: Python<'py>, error: PyErr);
}

/// Runs `call` in its hook's place: see the module's doc.
pub(super) fn stand_in<'py, C: StandIn<'py>>(py: Python<'py>, call: &C) -> PyResult<Py<PyAny>> {
    let (hook_phase, run_phase) = C::PHASES;
    let _timed = timed(hook_phase);
    let prepared = {
        let _off = DynamoOff::enter(py);
        call.prepare(py).unwrap_or_else(|e| {
            call.fail(py, e);
            None
        })
    };
    let result = {
        let _inside = (C::LAUNCH && prepared.is_some()).then(Inside::enter);
        let _timed = timed(run_phase);
        call.run(py, prepared.as_ref())?
    };
    if let Some(prepared) = prepared.filter(C::finishes) {
        let _off = DynamoOff::enter(py);
        if let Err(e) = call.finish(py, prepared, &result) {
            call.fail(py, e);
        }
    }
    Ok(result.unbind())
}

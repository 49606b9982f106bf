//! How a [`TraceFile`] describes a launch's arguments, read natively or
//! from Python values, against the hash tables its state holds.

use super::TraceFile;
use crate::phases::{Phase, timed};
use crate::python::describe::{Described, Read};
use crate::python::guard::io_error;
#[cfg(feature = "cuda")]
use crate::python::thread_state::thread_id;
#[cfg(feature = "cuda")]
use crate::recording::hashes::LaunchHashes;
use pyo3::prelude::*;

/// The calls behind [`TraceFile::describe`] and [`TraceFile::extend`],
/// for arguments read natively as well as Python values.
impl TraceFile {
    /// [`TraceFile::describe`] of `reads`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn describe_reads<'py>(
        &self,
        py: Python<'py>,
        reads: impl IntoIterator<Item = PyResult<Read<'py>>>,
        access: &[u8],
        hash_pre: bool,
        device_hashing: bool,
        stream: Option<u64>,
        inherit: bool,
        launch: bool,
        hold: bool,
    ) -> PyResult<Described> {
        let _timed = timed(Phase::Describe);
        self.with_state(py, |state| {
            let capturing = state.cuda_graphs.capturing();
            let inheriting = inherit && capturing.is_none();
            let capture = capturing.filter(|_| launch);
            #[cfg(feature = "cuda")]
            let beside =
                inherit && capture.is_some() && state.scope.captured_slots(thread_id()).is_some();
            let tables = state.tables(inheriting, inherit && capture.is_some())?;
            let mut described = Described::new(
                py,
                tables,
                reads,
                access,
                hash_pre,
                device_hashing,
                stream,
                capture,
                hold,
            )?;
            #[cfg(feature = "cuda")]
            {
                let mut scheduled = described.scheduled(py);
                // A launch writing bytes the call's input hashes read waits
                // for them.
                if let Err(e) = state.inputs.before_launch(&scheduled) {
                    scheduled.device_failed(e.to_string());
                }
                // The hashes after the last captured launch go with this
                // one's before it, into one table kernel, beside it when it
                // may run there. What is not a launch (a buffer handed out,
                // a graph call's inputs) writes nothing after this: they
                // wait for the next launch.
                if launch
                    && let Err(e) =
                        state
                            .captured
                            .before_launch(&mut scheduled, beside, thread_id())
                {
                    scheduled.device_failed(e.to_string());
                }
                let deferring = state.deferring();
                if let Some(writer) = state.writer.as_ref() {
                    state
                        .deferred
                        .before_launch(&mut scheduled, deferring, writer)
                        .map_err(io_error)?;
                }
            }
            #[cfg(not(feature = "cuda"))]
            described.dispatch();
            Ok(described)
        })
    }

    /// [`TraceFile::extend`] with `reads`.
    pub(crate) fn extend_reads<'py>(
        &self,
        py: Python<'py>,
        described: &mut Described,
        reads: impl IntoIterator<Item = PyResult<Read<'py>>>,
        access: &[u8],
    ) -> PyResult<()> {
        self.with_state(py, |state| {
            described.add(py, state.tables(false, false)?, reads, access, false)
        })
    }
}

/// The items of Python sequence `values`, each to be read as a tensor or
/// a host value.
pub(super) fn python_reads<'py>(
    values: &Bound<'py, PyAny>,
) -> PyResult<impl Iterator<Item = PyResult<Read<'py>>> + use<'py>> {
    Ok(values.try_iter()?.map(|value| value.map(Read::Python)))
}

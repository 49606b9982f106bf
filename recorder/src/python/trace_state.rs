//! What a `TraceFile` changes as it writes: the writer, the dtype table,
//! the graph calls in progress, the CUDA graphs captured, and the device
//! hashes waiting under the strategies that move them (deferred, beside a
//! captured graph's launches, beside a graph call); and how a record is
//! queued behind those hashes.

use super::describe::{Described, Dtypes, Tables};
use super::guard::io_error;
use super::thread_state::thread_id;
use crate::background::BackgroundWriter;
use crate::procs::Watcher;
use crate::recording::call_scope::CallScope;
use crate::recording::cuda_graphs::CudaGraphs;
#[cfg(feature = "cuda")]
use crate::recording::hashes::{
    captured::CapturedHashes, cuda::Cuda, deferred::DeferredHashes, inputs_beside::InputsBeside,
};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use tritontui_trace::format::Record;

/// What keeps a launch's tensors alive while its hashes wait.
#[cfg(feature = "cuda")]
type KeepAlive = Vec<super::alive::Alive>;

/// What a `TraceFile` changes as it writes.
pub(super) struct TraceState {
    pub(super) writer: Option<BackgroundWriter>,
    /// Keeps the process table current until the trace is closed.
    pub(super) watcher: Option<Watcher>,
    pub(super) dtypes: Dtypes,
    /// The graph calls in progress and the views their launches touched.
    pub(super) scope: CallScope,
    /// Whether device hashes may be deferred inside a graph call where
    /// they are inherited (`hashes::deferred`), and its inputs' hashes run
    /// beside it (`hashes::inputs_beside`).
    pub(super) defer_hashes: bool,
    #[cfg(feature = "cuda")]
    pub(super) deferred: DeferredHashes<Cuda, KeepAlive>,
    /// A device failure met while enqueuing deferred hashes outside any
    /// launch, for the session to hear of (`take_device_error`).
    pub(super) device_error: Option<String>,
    /// The CUDA graphs captured while recording, for their replays.
    pub(super) cuda_graphs: CudaGraphs,
    /// The hashes of launches captured inside a graph call, waiting for
    /// the next captured launch or running beside the graph's launches.
    #[cfg(feature = "cuda")]
    pub(super) captured: CapturedHashes<Cuda, KeepAlive>,
    /// The hashes of the inputs of the graph call in progress, when they
    /// run beside its launches.
    #[cfg(feature = "cuda")]
    pub(super) inputs: InputsBeside<Cuda, KeepAlive>,
}

impl TraceState {
    pub(super) fn writer(&mut self) -> PyResult<&mut BackgroundWriter> {
        self.writer
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("the trace is closed"))
    }

    /// Queues a record (a launch or a graph call, whose arguments
    /// `described` read) now, or once its device results are in; deferred
    /// hashes and the records waiting for them go first.
    pub(super) fn queue(&mut self, record: Record, described: &mut Described) -> PyResult<()> {
        if let Some(error) = self.enqueue_deferred()? {
            described.device_failed(error);
        }
        let fills = std::mem::take(&mut described.fills);
        let pending = described.take_pending();
        let writer = self.writer()?;
        match pending {
            Some(pending) if !fills.is_empty() => writer.pending(record, fills, pending),
            _ => writer.record(record),
        }
        .map_err(io_error)
    }

    /// Enqueues the deferred hashes and queues the records waiting for
    /// them; returns the device's failure, if any.
    pub(super) fn enqueue_deferred(&mut self) -> PyResult<Option<String>> {
        #[cfg(feature = "cuda")]
        if let Some(writer) = self.writer.as_ref() {
            return self.deferred.enqueue(writer).map_err(io_error);
        }
        Ok(None)
    }

    /// [`TraceState::release_hashes`], and the calling stream waits for
    /// the hashes of the graph call's inputs running beside it: something
    /// other than a launch comes.
    pub(super) fn release_deferred(&mut self) -> PyResult<()> {
        self.release_hashes()?;
        #[cfg(feature = "cuda")]
        if let Err(e) = self.inputs.join() {
            self.device_error.get_or_insert(e.to_string());
        }
        Ok(())
    }

    /// [`TraceState::enqueue_deferred`] outside any launch, after the
    /// hashes carried from the last captured launch: a device failure is
    /// kept for the session (`take_device_error`).
    pub(super) fn release_hashes(&mut self) -> PyResult<()> {
        self.release_captured();
        if let Some(error) = self.enqueue_deferred()? {
            self.device_error.get_or_insert(error);
        }
        Ok(())
    }

    /// Enqueues on their own the hashes carried from the last captured
    /// launch, and has the capturing stream wait for those running beside
    /// the graph's launches (something other than the next captured launch
    /// comes).
    pub(super) fn release_captured(&mut self) {
        #[cfg(feature = "cuda")]
        if let Err(e) = self.captured.release() {
            self.device_error.get_or_insert(e.to_string());
        }
    }

    /// Whether a launch on this thread may defer its device hashes now
    /// (not while it captures a CUDA graph: every hash is enqueued with
    /// its launch, into the graph).
    #[cfg(feature = "cuda")]
    pub(super) fn deferring(&self) -> bool {
        self.defer_hashes
            && self.scope.defers(thread_id())
            && self.cuda_graphs.capturing().is_none()
    }

    /// The writer and the dtype table, borrowed together (with the views
    /// a launch on this thread may inherit its hashes before from, when
    /// `inheriting`, and the table slots a launch this thread captures
    /// into a CUDA graph may share, when `captured`).
    pub(super) fn tables(&mut self, inheriting: bool, captured: bool) -> PyResult<Tables<'_>> {
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("the trace is closed"))?;
        Ok(Tables {
            writer,
            dtypes: &mut self.dtypes,
            known: if inheriting {
                self.scope.inheritable(thread_id())
            } else {
                None
            },
            captured: if captured {
                self.scope.captured_slots(thread_id())
            } else {
                None
            },
        })
    }
}

impl Drop for TraceState {
    /// Without [`TraceFile::close`] (a session never stopped), the trace
    /// keeps what was sent and has no end record (records waiting for
    /// deferred hashes are lost with them). The watcher goes first:
    /// it holds a sink into the writer's queue, which the writer thread
    /// drains until every sender is gone.
    fn drop(&mut self) {
        drop(self.watcher.take());
        drop(self.writer.take());
    }
}

//! Dynamo's frame evaluation turned off around the recorder's own work.
//!
//! While a `torch.compile`d function runs the parts it left eager, Dynamo
//! tries to compile every Python frame that starts on the thread. A native
//! hook called there (an eager op's `__torch_dispatch__`, a launch) runs
//! Python of the recorder's (`tritontui._host.host_value`, the hooks'
//! helpers) and of the program's (a host argument's `repr`): Dynamo would
//! compile those frames, which the unrecorded program never runs, and
//! the recording would have changed what torch compiles. torch wraps a
//! Python `__torch_dispatch__` in `torch._dynamo.disable` for the same
//! reason; the native hooks do what that does (set the thread's frame
//! callback to None, then back), around their own work only: the op or
//! kernel they record runs with the callback the program had.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// `torch._C._dynamo.eval_frame.set_eval_frame`, looked up once (None
/// in a torch without it: nothing to turn off).
static SET_EVAL_FRAME: PyOnceLock<Option<Py<PyAny>>> = PyOnceLock::new();

/// Dynamo's frame callback on this thread, off until dropped.
pub(super) struct DynamoOff<'py> {
    set: Option<Bound<'py, PyAny>>,
    /// The callback before, put back on drop (None: there was none).
    prior: Option<Bound<'py, PyAny>>,
}

impl<'py> DynamoOff<'py> {
    /// Turns Dynamo's frame callback off on this thread; never fails (a
    /// torch whose callback cannot be set has none to turn off).
    pub(super) fn enter(py: Python<'py>) -> DynamoOff<'py> {
        let set = SET_EVAL_FRAME
            .get_or_init(py, || {
                py.import("torch._C._dynamo.eval_frame")
                    .and_then(|m| m.getattr("set_eval_frame"))
                    .map(Bound::unbind)
                    .ok()
            })
            .as_ref()
            .map(|set| set.bind(py).clone());
        let prior = set
            .as_ref()
            .and_then(|set| set.call1((py.None(),)).ok())
            .filter(|prior| !prior.is_none());
        DynamoOff { set, prior }
    }
}

impl Drop for DynamoOff<'_> {
    fn drop(&mut self) {
        if let (Some(set), Some(prior)) = (&self.set, self.prior.take()) {
            let _ = set.call1((prior,));
        }
    }
}

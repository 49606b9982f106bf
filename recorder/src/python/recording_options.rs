//! The recording options as Python reads them: the trace crate's table
//! (`tritontui_trace::options`), its checks, and the typed choices the
//! native hooks record by ([`HookOptions`]).

use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use tritontui_trace::options::{self, Values};

/// `(name, environment variable, default, kind)` of each recording
/// option, kind being `text`, `flag`, `bytes`, `count` or `one of`.
#[pyfunction]
pub fn recording_options() -> Vec<(
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static str,
)> {
    options::ALL
        .iter()
        .map(|o| {
            let kind = match o.values {
                Values::Text => "text",
                Values::Flag => "flag",
                Values::Bytes => "bytes",
                Values::Count => "count",
                Values::OneOf(_) => "one of",
            };
            (o.name, o.env, o.default, kind)
        })
        .collect()
}

/// Why `text` is not a value of option `name` (None when it is one).
#[pyfunction]
pub fn option_error(name: &str, text: &str) -> PyResult<Option<String>> {
    let option = options::ALL
        .iter()
        .find(|o| o.name == name)
        .ok_or_else(|| PyValueError::new_err(format!("no recording option {name:?}")))?;
    Ok(option.check(text).err())
}

/// A flag's value as the environment writes it (`1`, `no`, ...), or None.
#[pyfunction]
pub fn parse_flag(text: &str) -> Option<bool> {
    options::flag(text)
}

/// What is taken of a launch's tensors after it ran.
#[pyclass(module = "tritontui._native", frozen, from_py_object)]
#[derive(Debug, Clone, Copy, Default)]
pub struct After {
    /// Their hashes (`hash` both or outputs).
    pub hash: bool,
    /// Floating tensors' summary statistics (`stats`).
    pub stats: bool,
    /// Written floating tensors' samples (`samples`).
    pub samples: bool,
    /// Tensors' row hashes (`rows`).
    pub rows: bool,
}

impl After {
    /// Nothing: an allocation's buffer, whose bytes it left as they were.
    pub const NOTHING: After = After {
        hash: false,
        stats: false,
        samples: false,
        rows: false,
    };

    /// Whether anything is taken that waits for the launch's results.
    pub fn reads_results(self) -> bool {
        self.hash || self.stats || self.samples || self.rows
    }
}

/// What the native hooks need of a session's options, typed.
#[pyclass(module = "tritontui._native", frozen)]
#[derive(Debug, Clone, Copy)]
pub struct HookOptions {
    /// Arguments are hashed before each launch (`hash` both or inputs).
    pub hash_inputs: bool,
    /// What is taken after each launch.
    pub after: After,
    /// Pause points are set: each launch asks the session first.
    pub pauses: bool,
    /// Launches are observed by Python (captured by value, hashed by the
    /// program's own hash function).
    pub observes: bool,
}

#[pymethods]
impl HookOptions {
    #[new]
    fn new(
        hash_inputs: bool,
        hash_outputs: bool,
        stats: bool,
        samples: bool,
        rows: bool,
        pauses: bool,
        observes: bool,
    ) -> Self {
        HookOptions {
            hash_inputs,
            after: After {
                hash: hash_outputs,
                stats,
                samples,
                rows,
            },
            pauses,
            observes,
        }
    }

    /// What is taken after each launch (for `TraceFile.launch`).
    #[getter(after)]
    fn after_launch(&self) -> After {
        self.after
    }
}

impl HookOptions {
    /// The `hook_options` of Python session `session`.
    pub fn of(session: &Bound<'_, PyAny>) -> PyResult<HookOptions> {
        Ok(*session
            .getattr(intern!(session.py(), "hook_options"))?
            .cast::<HookOptions>()?
            .get())
    }
}

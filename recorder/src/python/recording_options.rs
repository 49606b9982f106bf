//! The recording options as Python reads them: the trace crate's table
//! (`tritontui_trace::options`), its checks, and the typed choices the
//! native hooks record by ([`HookOptions`]).

use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use tritontui_trace::options::{self, Values};

/// `(name, environment variable, default, kind)` of each recording
/// option, kind being `text`, `flag`, `bytes` or `one of`.
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

/// What the native hooks need of a session's options, typed.
#[pyclass(module = "tritontui._native", frozen)]
#[derive(Debug, Clone, Copy)]
pub struct HookOptions {
    /// Arguments are hashed before each launch (`hash` both or inputs).
    pub hash_inputs: bool,
    /// Arguments are hashed after each launch (`hash` both or outputs).
    pub hash_outputs: bool,
    /// Summary statistics are taken after each launch.
    pub stats: bool,
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
        pauses: bool,
        observes: bool,
    ) -> Self {
        HookOptions {
            hash_inputs,
            hash_outputs,
            stats,
            pauses,
            observes,
        }
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

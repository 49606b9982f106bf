//! The numerics flags a program can switch while it runs, sampled where
//! they act (every compiled graph's call, before every op they change):
//! one call per flag into torch's own getters and one read of the
//! environment, with no Python frame, compared with the last sample.
//! Which flags there are, and their names, is `tritontui._settings`'s.

use crate::phases::{Phase, timed};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use std::sync::Mutex;

/// How one flag is read.
enum Getter {
    /// A torch getter's result.
    Call(Py<PyAny>),
    /// The first item of a torch getter's result (a getter that returns
    /// the flag and whether it may be overridden).
    First(Py<PyAny>),
    /// An environment variable of the process (None when unset).
    Env(String),
}

/// Samples the flags and tells when they changed since the last sample.
#[pyclass(module = "tritontui._native", frozen)]
pub struct NumericsSampler {
    getters: Vec<Getter>,
    last: Mutex<Vec<Py<PyAny>>>,
}

#[pymethods]
impl NumericsSampler {
    /// `getters` are `(kind, what)` pairs: `("call", getter)`,
    /// `("first", getter)` or `("env", name)`. Samples once now.
    #[new]
    fn new(py: Python<'_>, getters: Vec<(String, Py<PyAny>)>) -> PyResult<Self> {
        let getters = getters
            .into_iter()
            .map(|(kind, what)| match kind.as_str() {
                "call" => Ok(Getter::Call(what)),
                "first" => Ok(Getter::First(what)),
                "env" => Ok(Getter::Env(what.extract(py)?)),
                other => Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown getter kind {other:?}"
                ))),
            })
            .collect::<PyResult<Vec<_>>>()?;
        let sampler = NumericsSampler {
            getters,
            last: Mutex::new(Vec::new()),
        };
        let now = sampler.read(py)?;
        *sampler.last.lock().unwrap_or_else(|e| e.into_inner()) = now;
        Ok(sampler)
    }

    /// The flags' values in the getters' order, as last sampled.
    fn last<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        PyTuple::new(py, last.iter().map(|v| v.bind(py)))
    }

    /// Samples the flags: their values when any changed since the last
    /// sample, else None.
    fn changed<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let _timed = timed(Phase::Numerics);
        let now = self.read(py)?;
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let mut same = last.len() == now.len();
        for (a, b) in now.iter().zip(last.iter()) {
            if !same {
                break;
            }
            same = a.bind(py).eq(b.bind(py))?;
        }
        if same {
            return Ok(None);
        }
        let tuple = PyTuple::new(py, now.iter().map(|v| v.bind(py)))?;
        *last = now;
        Ok(Some(tuple))
    }
}

impl NumericsSampler {
    fn read(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        self.getters
            .iter()
            .map(|getter| {
                Ok(match getter {
                    Getter::Call(f) => f.bind(py).call0()?.unbind(),
                    Getter::First(f) => f.bind(py).call0()?.get_item(0)?.unbind(),
                    Getter::Env(name) => match std::env::var_os(name) {
                        Some(value) => PyString::new(py, &value.to_string_lossy())
                            .into_any()
                            .unbind(),
                        None => py.None(),
                    },
                })
            })
            .collect()
    }
}

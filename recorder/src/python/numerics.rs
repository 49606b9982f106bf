//! The numerics flags a program can switch while it runs, sampled where
//! they act (every compiled graph's call, before every op they change):
//! one call per flag into torch's own getters and one read of the
//! environment, with no Python frame, compared with the last sample,
//! which is kept as Rust values: an unchanged flag makes no Python object.
//! Which flags there are, and their names, is `tritontui._settings`'s.

use crate::phases::{Phase, timed};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyString, PyTuple};
use std::ffi::OsString;
use std::sync::Mutex;

/// How one flag is read.
enum Getter {
    /// A torch getter's result, or (`first`) the first item of it (a
    /// getter that returns the flag and whether it may be overridden).
    Torch { getter: Py<PyAny>, first: bool },
    /// An environment variable of the process.
    Env(String),
}

impl Getter {
    /// The flag's value now: a Python object, or the environment's text.
    fn read<'py>(&self, py: Python<'py>) -> PyResult<Read<'py>> {
        Ok(match self {
            Getter::Torch { getter, first } => {
                let value = getter.bind(py).call0()?;
                Read::Torch(if *first { value.get_item(0)? } else { value })
            }
            Getter::Env(name) => Read::Env(std::env::var_os(name)),
        })
    }
}

/// A flag's value as just read.
enum Read<'py> {
    Torch(Bound<'py, PyAny>),
    Env(Option<OsString>),
}

/// A flag's value as last sampled: a Rust value where torch gives a bool,
/// an int or a str (or the environment a string), so that sampling an
/// unchanged flag makes no Python object and no rich comparison.
enum Sampled {
    /// An environment variable that is unset.
    Unset,
    Bool(bool),
    Int(i64),
    Text(String),
    /// An enum of torch's (pybind11's, whose `==` costs twice its
    /// `__index__`): the value, compared by its type and index.
    Enum(Py<PyAny>, i64),
    /// Anything else, compared with `==`.
    Other(Py<PyAny>),
}

impl Sampled {
    fn of(value: &Bound<'_, PyAny>) -> Sampled {
        if let Ok(flag) = value.cast_exact::<PyBool>() {
            return Sampled::Bool(flag.is_true());
        }
        if value.is_exact_instance_of::<PyInt>()
            && let Ok(number) = value.extract::<i64>()
        {
            return Sampled::Int(number);
        }
        if let Ok(text) = value.cast_exact::<PyString>()
            && let Ok(text) = text.to_str()
        {
            return Sampled::Text(text.to_owned());
        }
        if let Some(index) = enum_index(value) {
            return Sampled::Enum(value.clone().unbind(), index);
        }
        Sampled::Other(value.clone().unbind())
    }

    fn of_read(read: &Read<'_>) -> Sampled {
        match read {
            Read::Torch(value) => Sampled::of(value),
            Read::Env(value) => value.as_ref().map_or(Sampled::Unset, |v| {
                Sampled::Text(v.to_string_lossy().into_owned())
            }),
        }
    }

    /// Whether what was just read is what was sampled.
    fn matches(&self, read: &Read<'_>) -> PyResult<bool> {
        let value = match read {
            Read::Env(value) => {
                return Ok(match (self, value) {
                    (Sampled::Unset, None) => true,
                    (Sampled::Text(text), Some(value)) => value.to_string_lossy() == text.as_str(),
                    _ => false,
                });
            }
            Read::Torch(value) => value,
        };
        Ok(match self {
            Sampled::Bool(flag) => value
                .cast_exact::<PyBool>()
                .is_ok_and(|v| v.is_true() == *flag),
            Sampled::Int(number) => {
                value.is_exact_instance_of::<PyInt>()
                    && value.extract::<i64>().ok() == Some(*number)
            }
            Sampled::Text(text) => value
                .cast_exact::<PyString>()
                .ok()
                .is_some_and(|v| v.to_str().is_ok_and(|v| v == text)),
            Sampled::Enum(last, index) => {
                value.get_type().is(last.bind(value.py()).get_type())
                    && index_of(value) == Some(*index)
            }
            Sampled::Other(last) => value.is(last) || value.eq(last)?,
            Sampled::Unset => false,
        })
    }

    fn to_object<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        match self {
            Sampled::Unset => py.None().into_bound(py),
            Sampled::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
            Sampled::Int(number) => PyInt::new(py, *number).into_any(),
            Sampled::Text(text) => PyString::new(py, text).into_any(),
            Sampled::Enum(value, _) | Sampled::Other(value) => value.bind(py).clone(),
        }
    }
}

/// Samples the flags and tells when they changed since the last sample.
#[pyclass(module = "tritontui._native", frozen)]
pub struct NumericsSampler {
    getters: Vec<Getter>,
    last: Mutex<Vec<Sampled>>,
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
                "call" => Ok(Getter::Torch {
                    getter: what,
                    first: false,
                }),
                "first" => Ok(Getter::Torch {
                    getter: what,
                    first: true,
                }),
                "env" => Ok(Getter::Env(what.extract(py)?)),
                other => Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown getter kind {other:?}"
                ))),
            })
            .collect::<PyResult<Vec<_>>>()?;
        let first = getters
            .iter()
            .map(|getter| Ok(Sampled::of_read(&getter.read(py)?)))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(NumericsSampler {
            getters,
            last: Mutex::new(first),
        })
    }

    /// The flags' values in the getters' order, as last sampled.
    fn last<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        PyTuple::new(py, last.iter().map(|v| v.to_object(py)))
    }

    /// Samples the flags: their values when any changed since the last
    /// sample, else None.
    fn changed<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let _timed = timed(Phase::Numerics);
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let mut changed = false;
        for (getter, sampled) in self.getters.iter().zip(last.iter_mut()) {
            let now = getter.read(py)?;
            if !sampled.matches(&now)? {
                *sampled = Sampled::of_read(&now);
                changed = true;
            }
        }
        if !changed {
            return Ok(None);
        }
        Ok(Some(PyTuple::new(
            py,
            last.iter().map(|v| v.to_object(py)),
        )?))
    }
}

/// The index of an enum value of torch's (pybind11's enums have
/// `__members__` and `__index__`); None for anything else.
fn enum_index(value: &Bound<'_, PyAny>) -> Option<i64> {
    let members = pyo3::intern!(value.py(), "__members__");
    value.hasattr(members).ok()?.then(|| index_of(value))?
}

/// `value.__index__()`, when it has one.
fn index_of(value: &Bound<'_, PyAny>) -> Option<i64> {
    value
        .call_method0(pyo3::intern!(value.py(), "__index__"))
        .ok()?
        .extract()
        .ok()
}

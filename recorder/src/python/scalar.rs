//! Non-tensor launch arguments as trace scalars.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
use tritontui_trace::format::Scalar;

/// A non-tensor argument as a trace scalar: any other host object is
/// recorded by what determines results, never by its identity
/// (docs/trace-format.md, host objects).
pub(crate) fn scalar(item: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    scalar_or(item, |other| {
        let value = HOST_VALUE
            .import(other.py(), "tritontui._host", "host_value")?
            .call1((other,))?;
        Ok(value.cast_into::<PyString>()?.to_str()?.to_owned())
    })
}

/// A value the recorder itself reports (a compile event's detail, what the
/// program's hash function gave) as a trace scalar: anything but None, a
/// bool, an int, a float or a string as its `str()`.
pub(crate) fn plain(item: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    scalar_or(item, |other| Ok(other.str()?.to_str()?.to_owned()))
}

/// None, a bool, an int, a float or a string as itself, anything else as
/// the text `other` makes of it.
fn scalar_or(
    item: &Bound<'_, PyAny>,
    other: impl FnOnce(&Bound<'_, PyAny>) -> PyResult<String>,
) -> PyResult<Scalar> {
    if item.is_none() {
        Ok(Scalar::None)
    } else if let Ok(b) = item.cast::<PyBool>() {
        Ok(Scalar::Bool(b.is_true()))
    } else if item.is_instance_of::<PyInt>() {
        match item.extract::<i64>() {
            Ok(v) => Ok(Scalar::Int(v)),
            Err(_) => Ok(item
                .extract::<u64>()
                .map(Scalar::UInt)
                .unwrap_or_else(|_| Scalar::Str(item.to_string()))),
        }
    } else if let Ok(f) = item.cast::<PyFloat>() {
        Ok(Scalar::Float(f.value()))
    } else if let Ok(s) = item.cast::<PyString>() {
        Ok(Scalar::Str(s.to_str()?.to_owned()))
    } else {
        other(item).map(Scalar::Str)
    }
}

/// `tritontui._host.host_value`, looked up once.
static HOST_VALUE: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();

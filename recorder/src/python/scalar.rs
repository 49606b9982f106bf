//! Non-tensor launch arguments as trace scalars.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
use tritontui_trace::format::Scalar;

/// A non-tensor argument as a trace scalar.
pub(crate) fn scalar(item: &Bound<'_, PyAny>) -> PyResult<Scalar> {
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
        // Any other host object is recorded by what determines results,
        // never by its identity (docs/trace-format.md, host objects).
        let value = HOST_VALUE
            .import(item.py(), "tritontui._host", "host_value")?
            .call1((item,))?;
        Ok(Scalar::Str(
            value.cast_into::<PyString>()?.to_str()?.to_owned(),
        ))
    }
}

/// A value the recorder itself reports (a compile event's detail, what the
/// program's hash function gave) as a trace scalar: None, a bool, an int,
/// a float or a string as it is, anything else as its `str()`.
pub(crate) fn plain(item: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    let is_plain = item.is_none()
        || item.is_instance_of::<PyBool>()
        || item.is_instance_of::<PyInt>()
        || item.is_instance_of::<PyFloat>()
        || item.is_instance_of::<PyString>();
    if is_plain {
        scalar(item)
    } else {
        Ok(Scalar::Str(item.str()?.to_str()?.to_owned()))
    }
}

/// `tritontui._host.host_value`, looked up once.
static HOST_VALUE: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();

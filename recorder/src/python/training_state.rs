//! The objects a program's optimizers hold at a step's end, walked
//! without a Python frame: the walk runs at every step of a fingerprinted
//! run, right after the optimizer's kernels, when the interpreter's own
//! code and data are out of cache and each bytecode costs several times
//! its usual time.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use std::collections::HashMap;

/// The objects the optimizers in `optimizers` hold now, in the order a
/// step's state is fingerprinted in: each optimizer's parameters group by
/// group (`param_groups[i]["params"]`), each followed by the values of its
/// dict in `optimizer.state`, if any, in key order (sorted as text, ties
/// as the dict holds them). `None` where they are the objects `previous`
/// holds, in order: the usual step, whose state was named before.
#[pyfunction]
pub(super) fn optimizer_state<'py>(
    optimizers: &Bound<'py, PyList>,
    previous: &Bound<'py, PyList>,
) -> PyResult<Option<Bound<'py, PyList>>> {
    let mut held = Vec::with_capacity(previous.len());
    for optimizer in optimizers.iter() {
        let states = by_object(&optimizer.getattr("state")?);
        for group in optimizer.getattr("param_groups")?.try_iter()? {
            for param in group?.get_item("params")?.try_iter()? {
                let param = param?;
                let state = states.get(&param.as_ptr()).cloned();
                held.push(param);
                if let Some(state) = state {
                    held.extend(in_key_order(&state)?);
                }
            }
        }
    }
    let same = held.len() == previous.len()
        && held
            .iter()
            .zip(previous.iter())
            .all(|(now, before)| now.is(&before));
    if same {
        return Ok(None);
    }
    PyList::new(optimizers.py(), held).map(Some)
}

/// The dicts of an optimizer's `state` by their key's object: what
/// `state.get(param)` finds for a tensor, whose hash is its `id` (found
/// so, a lookup calls no Python `__hash__`).
fn by_object<'py>(states: &Bound<'py, PyAny>) -> HashMap<*mut ffi::PyObject, Bound<'py, PyDict>> {
    let Ok(states) = states.cast::<PyDict>() else {
        return HashMap::new();
    };
    states
        .iter()
        .filter_map(|(key, state)| Some((key.as_ptr(), state.cast_into::<PyDict>().ok()?)))
        .collect()
}

/// `state`'s values, its keys sorted as text (`sorted(state, key=str)`).
fn in_key_order<'py>(state: &Bound<'py, PyDict>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let mut items = Vec::with_capacity(state.len());
    for (key, value) in state.iter() {
        let text = match key.cast_into::<PyString>() {
            Ok(text) => text,
            Err(key) => key.into_inner().str()?,
        };
        items.push((text, value));
    }
    // Keys are compared in place (a valid UTF-8 key is not copied).
    let mut failed = None;
    items.sort_by(|a, b| match (a.0.to_cow(), b.0.to_cow()) {
        (Ok(a), Ok(b)) => a.cmp(&b),
        (Err(e), _) | (_, Err(e)) => {
            failed.get_or_insert(e);
            std::cmp::Ordering::Equal
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(items.into_iter().map(|(_, value)| value).collect())
}

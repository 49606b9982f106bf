//! Inductor's extern kernels (`extern_kernels.mm(a, b, out=buf)` and the
//! like, called by a compiled graph's wrapper) recorded without the
//! dispatch mode: each entry of Inductor's `extern_kernels` namespace is
//! replaced, while aten ops are recorded, by one of these native proxies.
//! With the recorder's mode on top of the dispatch stack, a call takes the
//! mode off the stack, has the aten hook record and run the op overload
//! that the call's arguments select, and puts the mode back: the op is
//! recorded as the mode would record it, without torch converting every
//! argument to Python and back for a Python `__torch_dispatch__`.
//! Anywhere else (the mode not on top: a compilation benchmarking the
//! kernel, another mode pushed over it, no recording) the original runs
//! as it is, and the mode sees whatever it dispatches.

use super::aten_hook::AtenHook;
use super::describe::is_tensor;
use super::dynamo_off::DynamoOff;
use super::hook_session::poisoned;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The op overload a call selects, by its positional count and keyword
/// names; None where no single overload fits (the original then runs).
type Overloads = FxHashMap<(usize, Vec<String>), Option<Arc<Overload>>>;

/// An op overload and its schema's arguments.
struct Overload {
    op: Py<PyAny>,
    params: Vec<Param>,
}

/// One argument of a schema.
struct Param {
    name: Py<PyString>,
    kwarg_only: bool,
    /// Its default value, if it has one.
    default: Option<Py<PyAny>>,
}

/// The replacement of one `extern_kernels` entry.
#[pyclass(module = "tritontui._native", frozen)]
pub struct ExternHook {
    /// What the entry held: `torch.mm`, an op packet or overload.
    original: Py<PyAny>,
    /// The aten recorder's native `__torch_dispatch__`.
    aten: Py<AtenHook>,
    /// The aten recorder (the mode) whose hook that is.
    mode: Py<PyAny>,
    /// `tritontui.hooks.extern_kernels`: `overload`.
    helpers: Py<PyAny>,
    overloads: Mutex<Overloads>,
    /// Calls recorded with the mode off the stack.
    dispatched: AtomicU64,
    /// `torch._C`'s dispatch-stack functions.
    stack_len: Py<PyAny>,
    stack_at: Py<PyAny>,
    pop: Py<PyAny>,
    push: Py<PyAny>,
}

#[pymethods]
impl ExternHook {
    #[new]
    fn new(
        py: Python<'_>,
        original: Py<PyAny>,
        aten: Py<AtenHook>,
        mode: Py<PyAny>,
        helpers: Py<PyAny>,
    ) -> PyResult<Self> {
        let c = py.import("torch._C")?;
        let get = |name: &str| -> PyResult<Py<PyAny>> { Ok(c.getattr(name)?.unbind()) };
        Ok(ExternHook {
            original,
            aten,
            mode,
            helpers,
            overloads: Mutex::new(FxHashMap::default()),
            dispatched: AtomicU64::new(0),
            stack_len: get("_len_torch_dispatch_stack")?,
            stack_at: get("_get_dispatch_stack_at")?,
            pop: get("_pop_torch_dispatch_stack")?,
            push: get("_push_on_torch_dispatch_stack")?,
        })
    }

    /// What the proxy stands for (the original entry).
    #[getter]
    fn original(&self, py: Python<'_>) -> Py<PyAny> {
        self.original.clone_ref(py)
    }

    /// How many calls this proxy recorded with the mode off the stack.
    #[getter]
    fn dispatched(&self) -> u64 {
        self.dispatched.load(Ordering::Relaxed)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let aten = self.aten.get();
        let prepared = {
            let _off = DynamoOff::enter(py);
            self.prepare(py, args, kwargs)
                .inspect_err(|e| aten.fail(py, e.clone_ref(py)))
        };
        let Ok(Some((overload, given, keywords, popped))) = prepared else {
            return Ok(self.original.bind(py).call(args, kwargs)?.unbind());
        };
        self.dispatched.fetch_add(1, Ordering::Relaxed);
        let result = aten.dispatch(py, overload.op.bind(py), Some(&given), keywords.as_ref());
        let _off = DynamoOff::enter(py);
        if let Err(e) = self.push.bind(py).call1((popped,)) {
            aten.fail(py, e);
        }
        result
    }
}

/// A call to record: its overload, its arguments as the mode would get
/// them, and the mode, taken off the stack.
type Prepared<'py> = (
    Arc<Overload>,
    Bound<'py, PyTuple>,
    Option<Bound<'py, PyDict>>,
    Bound<'py, PyAny>,
);

impl ExternHook {
    /// What recording this call needs, the mode taken off the stack last;
    /// None when the call is left to the original (the mode not on top,
    /// no single overload fits).
    fn prepare<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Option<Prepared<'py>>> {
        if !self.mode_on_top(py)? {
            return Ok(None);
        }
        let Some(overload) = self.overload(py, args, kwargs)? else {
            return Ok(None);
        };
        let (given, keywords) = overload.arguments(py, args, kwargs)?;
        let popped = self.pop.bind(py).call1((py.None(),))?;
        Ok(Some((overload, given, keywords, popped)))
    }

    /// Whether the recorder's mode is on top of this thread's dispatch
    /// stack (the program's own code is running, recorded).
    fn mode_on_top(&self, py: Python<'_>) -> PyResult<bool> {
        let len: usize = self.stack_len.bind(py).call0()?.extract()?;
        Ok(len > 0
            && self
                .stack_at
                .bind(py)
                .call1((len - 1,))?
                .is(self.mode.bind(py)))
    }

    /// The overload this call selects: cached by its shape, or asked of
    /// Python the first time.
    fn overload(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Option<Arc<Overload>>> {
        let mut names = Vec::new();
        if let Some(kwargs) = kwargs {
            for key in kwargs.keys() {
                names.push(key.cast::<PyString>()?.to_str()?.to_owned());
            }
        }
        let key = (args.len(), names);
        if let Some(found) = self.overloads.lock().map_err(poisoned)?.get(&key) {
            return Ok(found.clone());
        }
        type Answer = Option<(Py<PyAny>, Vec<(Py<PyString>, bool, bool, Py<PyAny>)>)>;
        let answer: Answer = self
            .helpers
            .bind(py)
            .call_method1(
                intern!(py, "overload"),
                (self.original.bind(py), key.0, key.1.clone()),
            )?
            .extract()?;
        let found = answer.map(|(op, params)| {
            Arc::new(Overload {
                op,
                params: params
                    .into_iter()
                    .map(|(name, kwarg_only, has_default, default)| Param {
                        name,
                        kwarg_only,
                        default: has_default.then_some(default),
                    })
                    .collect(),
            })
        });
        let mut overloads = self.overloads.lock().map_err(poisoned)?;
        Ok(overloads.entry(key).or_insert(found).clone())
    }
}

impl Overload {
    /// The call's arguments as torch hands them to a dispatch mode: the
    /// positional ones up to the last that is not at its default, the
    /// keyword-only ones that are not at their defaults (so that the op
    /// is recorded as the mode records it, whichever way the call spelled
    /// its defaults).
    fn arguments<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<(Bound<'py, PyTuple>, Option<Bound<'py, PyDict>>)> {
        let mut values = Vec::with_capacity(self.params.len());
        for (i, param) in self.params.iter().enumerate() {
            values.push(if !param.kwarg_only && i < args.len() {
                Some(args.get_item(i)?)
            } else {
                match kwargs {
                    Some(kwargs) => kwargs.get_item(param.name.bind(py))?,
                    None => None,
                }
            });
        }
        let at_default = |i: usize| -> PyResult<bool> {
            let (param, value) = (&self.params[i], &values[i]);
            match (&param.default, value) {
                (None, _) => Ok(false),
                (Some(_), None) => Ok(true),
                (Some(default), Some(value)) => Ok(value.is(default.bind(py))
                    || (!is_tensor(value)? && value.eq(default.bind(py))?)),
            }
        };
        let mut positional = self.params.iter().take_while(|p| !p.kwarg_only).count();
        while positional > 0 && at_default(positional - 1)? {
            positional -= 1;
        }
        let mut given = Vec::with_capacity(positional);
        for (param, value) in self.params.iter().zip(&values).take(positional) {
            given.push(match (value, &param.default) {
                (Some(value), _) => value.clone(),
                (None, Some(default)) => default.bind(py).clone(),
                (None, None) => py.None().into_bound(py),
            });
        }
        let keywords = PyDict::new(py);
        for (i, (param, value)) in self.params.iter().zip(&values).enumerate() {
            if let (true, Some(value)) = (param.kwarg_only, value)
                && !at_default(i)?
            {
                keywords.set_item(param.name.bind(py), value)?;
            }
        }
        let keywords = (!keywords.is_empty()).then_some(keywords);
        Ok((PyTuple::new(py, given)?, keywords))
    }
}

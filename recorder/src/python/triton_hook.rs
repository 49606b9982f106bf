//! `CachingAutotuner.run` replaced by a native callable, so that recording
//! an Inductor launch adds no Python frame to it: every launch of a
//! compiled model comes through here, and on a host-bound step each
//! microsecond per launch shows in the step time.
//!
//! What is fixed per autotuner (name, access codes) and per config (kernel
//! id, grid for given sizes) comes from Python once (`tritontui.hooks.triton`)
//! and is cached here; a launch then costs one describe before the original
//! `run` and one launch record after it. Any error is handed to the
//! session's `fail`, which stops recording; the launch itself always runs.

use super::describe::Described;
use super::hook_session::{HookSession, poisoned};
use super::stand_in::{StandIn, stand_in};
use crate::phases::Phase;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyList, PyTuple};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::sync::{Arc, Mutex};

/// What never changes for an autotuner, fixed at its first launch.
struct Fixed {
    name: String,
    codes: Vec<u8>,
    wanted: bool,
    /// Positions of the non-tensor arguments.
    scalars: Vec<usize>,
}

/// One autotuner's cache entry.
struct Static {
    /// Kept alive so that its address names it for the cache's lifetime.
    _autotuner: Py<PyAny>,
    /// Shared out of the lock, which is never held across a Python call.
    fixed: Arc<Fixed>,
    /// The `launchers` list seen last, its one launcher and that
    /// launcher's config (all kept alive, so that their addresses stay
    /// theirs): while the autotuner keeps that list holding that launcher,
    /// its config is known without asking.
    last: Option<Last>,
    /// Kernel ids by config (kept alive as well).
    kernels: FxHashMap<usize, (Py<PyAny>, u64)>,
    /// Grids by config, then by the integer scalar arguments.
    grids: FxHashMap<usize, FxHashMap<Sizes, Vec<u64>>>,
}

/// See [`Static::last`].
struct Last {
    launchers: Py<PyAny>,
    launcher: Py<PyAny>,
    config: Py<PyAny>,
}

impl Last {
    /// Whether `launchers` is this list, still holding this one launcher.
    fn holds(&self, py: Python<'_>, launchers: &Bound<'_, PyAny>) -> bool {
        self.launchers.bind(py).is(launchers)
            && launchers.cast::<PyList>().is_ok_and(|list| {
                list.len() == 1
                    && list
                        .get_item(0)
                        .is_ok_and(|first| first.is(self.launcher.bind(py)))
            })
    }
}

/// The integer scalar arguments of a launch, which its grid depends on.
type Sizes = SmallVec<[i64; 4]>;

/// The replacement of `CachingAutotuner.run` for one recording session.
#[pyclass(module = "tritontui._native", frozen)]
pub struct TritonHook {
    original: Py<PyAny>,
    session: HookSession,
    /// `tritontui.hooks.triton`: `prepare`, `define` and `grid`.
    helpers: Py<PyAny>,
    statics: Mutex<FxHashMap<usize, Static>>,
}

/// `run` bound to one autotuner, as `autotuner.run` gives it.
#[pyclass(module = "tritontui._native", frozen)]
pub struct BoundRun {
    hook: Py<TritonHook>,
    autotuner: Py<PyAny>,
}

#[pymethods]
impl TritonHook {
    /// `original` is the `run` being replaced; `session` the recording
    /// session, whose `file`, `hash_inputs`, `hash_outputs`, `stats`,
    /// and `breaks` are read now (`device_hashing` at every launch).
    #[new]
    fn new(
        py: Python<'_>,
        original: Py<PyAny>,
        session: Py<PyAny>,
        helpers: Py<PyAny>,
    ) -> PyResult<Self> {
        Ok(TritonHook {
            original,
            session: HookSession::new(py, session)?,
            helpers,
            statics: Mutex::new(FxHashMap::default()),
        })
    }

    fn __get__(
        slf: Py<Self>,
        autotuner: Option<Py<PyAny>>,
        _owner: Option<Py<PyAny>>,
        py: Python<'_>,
    ) -> PyResult<Py<PyAny>> {
        match autotuner {
            Some(autotuner) => Ok(Py::new(
                py,
                BoundRun {
                    hook: slf,
                    autotuner,
                },
            )?
            .into_any()),
            None => Ok(slf.into_any()),
        }
    }

    /// `CachingAutotuner.run(autotuner, *args, stream=...)` called through
    /// the class.
    #[pyo3(signature = (autotuner, *args, **kwargs))]
    fn __call__(
        slf: Py<Self>,
        py: Python<'_>,
        autotuner: Py<PyAny>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        BoundRun {
            hook: slf,
            autotuner,
        }
        .__call__(py, args, kwargs)
    }
}

#[pymethods]
impl BoundRun {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let launch = TritonLaunch {
            hook: self.hook.get(),
            autotuner: self.autotuner.bind(py),
            args,
            kwargs,
        };
        stand_in(py, &launch)
    }
}

/// One launch through an autotuner's `run`.
struct TritonLaunch<'a, 'py> {
    hook: &'a TritonHook,
    autotuner: &'a Bound<'py, PyAny>,
    args: &'a Bound<'py, PyTuple>,
    kwargs: Option<&'a Bound<'py, PyDict>>,
}

impl<'py> StandIn<'py> for TritonLaunch<'_, 'py> {
    /// What is fixed for the autotuner, the launch's arguments described,
    /// and the stream it was given.
    type Prepared = (Arc<Fixed>, Described, Option<u64>);

    const PHASES: (Phase, Phase) = (Phase::TritonHook, Phase::TritonRun);

    const LAUNCH: bool = true;

    fn prepare(&self, py: Python<'py>) -> PyResult<Option<Self::Prepared>> {
        let stream = match self.kwargs {
            Some(kw) => kw.get_item(intern!(py, "stream"))?,
            None => None,
        };
        let stream: Option<u64> = stream
            .as_ref()
            .filter(|s| !s.is_none())
            .and_then(|s| s.extract().ok());
        let prepared = self.hook.before(py, self.autotuner, self.args, stream)?;
        Ok(prepared.map(|(fixed, described)| (fixed, described, stream)))
    }

    fn run(
        &self,
        py: Python<'py>,
        _prepared: Option<&Self::Prepared>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.hook
            .call_original(py, self.autotuner, self.args, self.kwargs)
    }

    fn finish(
        &self,
        py: Python<'py>,
        (fixed, mut described, stream): Self::Prepared,
        _result: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        self.hook.after(
            py,
            self.autotuner,
            self.args,
            &fixed,
            stream,
            &mut described,
        )
    }

    fn fail(&self, py: Python<'py>, error: PyErr) {
        self.hook.session.fail(py, error);
    }
}

impl TritonHook {
    /// The replaced `run`, called with `autotuner` as its `self`.
    fn call_original<'py>(
        &self,
        py: Python<'py>,
        autotuner: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut all = Vec::with_capacity(args.len() + 1);
        all.push(autotuner.clone());
        all.extend(args.iter());
        let all = PyTuple::new(py, all)?;
        self.original.bind(py).call(all, kwargs)
    }

    /// What is fixed for the autotuner and the launch's arguments,
    /// described; None when the kernel is not recorded.
    fn before(
        &self,
        py: Python<'_>,
        autotuner: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        stream: Option<u64>,
    ) -> PyResult<Option<(Arc<Fixed>, Described)>> {
        let fixed = self.fixed(py, autotuner, args)?;
        if !fixed.wanted {
            return Ok(None);
        }
        let described = self.session.before(
            py,
            args.as_any(),
            &fixed.codes,
            self.session.options.hash_inputs,
            stream,
            &fixed.name,
        );
        match described {
            Ok(described) => Ok(Some((fixed, described))),
            Err(e) => {
                self.session.unrecorded(py, &fixed.name, e);
                Ok(None)
            }
        }
    }

    /// What never changes for this autotuner: cached, or asked of Python
    /// at its first launch.
    fn fixed(
        &self,
        py: Python<'_>,
        autotuner: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
    ) -> PyResult<Arc<Fixed>> {
        let key = autotuner.as_ptr() as usize;
        if let Some(found) = self.statics.lock().map_err(poisoned)?.get(&key) {
            return Ok(Arc::clone(&found.fixed));
        }
        let (name, codes, wanted): (String, Vec<u8>, bool) = self
            .helpers
            .bind(py)
            .call_method1(
                intern!(py, "prepare"),
                (autotuner, self.session.python.bind(py)),
            )?
            .extract()?;
        let fixed = Arc::new(Fixed {
            name,
            codes,
            wanted,
            scalars: scalar_positions(py, args)?,
        });
        let mut statics = self.statics.lock().map_err(poisoned)?;
        let entry = statics.entry(key).or_insert_with(|| Static {
            _autotuner: autotuner.clone().unbind(),
            fixed,
            last: None,
            kernels: FxHashMap::default(),
            grids: FxHashMap::default(),
        });
        Ok(Arc::clone(&entry.fixed))
    }

    /// Writes the launch record.
    fn after(
        &self,
        py: Python<'_>,
        autotuner: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        fixed: &Fixed,
        stream: Option<u64>,
        described: &mut Described,
    ) -> PyResult<()> {
        let (kernel, grid) = self.kernel_and_grid(py, autotuner, fixed, args)?;
        self.session
            .after(py, described, None, kernel, grid, stream.unwrap_or(0))
    }

    /// The kernel id of the autotuner's config (its one launcher's, after
    /// the launch) and the launch's grid, from the cache or (the first
    /// time) from Python.
    fn kernel_and_grid(
        &self,
        py: Python<'_>,
        autotuner: &Bound<'_, PyAny>,
        fixed: &Fixed,
        args: &Bound<'_, PyTuple>,
    ) -> PyResult<(u64, Vec<u64>)> {
        let key = autotuner.as_ptr() as usize;
        let launchers = autotuner.getattr(intern!(py, "launchers"))?;
        let sizes = integer_scalars(args, &fixed.scalars);
        let (config, kernel, grid) = {
            let statics = self.statics.lock().map_err(poisoned)?;
            let found = statics.get(&key);
            // The same list still holding the same launcher: the same config.
            let config = found
                .and_then(|f| f.last.as_ref())
                .filter(|last| last.holds(py, &launchers))
                .map(|last| last.config.clone_ref(py));
            let config_key = config.as_ref().map(|c| c.as_ptr() as usize);
            let kernel = config_key.and_then(|c| found?.kernels.get(&c)).map(|k| k.1);
            let grid = config_key
                .and_then(|c| found?.grids.get(&c))
                .zip(sizes.as_deref())
                .and_then(|(grids, sizes)| grids.get(sizes).cloned());
            (config, kernel, grid)
        };
        let (kernel, grid) = match (kernel, grid) {
            (Some(kernel), Some(grid)) => return Ok((kernel, grid)),
            missing => missing,
        };
        let config = match config {
            Some(config) => config.into_bound(py),
            None => config_of(py, autotuner, &launchers)?,
        };
        let config_key = config.as_ptr() as usize;
        let helpers = self.helpers.bind(py);
        let kernel = match kernel {
            Some(kernel) => kernel,
            None => helpers
                .call_method1(
                    intern!(py, "define"),
                    (self.session.python.bind(py), autotuner, &config),
                )?
                .extract()?,
        };
        let grid: Vec<u64> = match grid {
            Some(grid) => grid,
            None => helpers
                .call_method1(intern!(py, "grid"), (autotuner, &config, args))?
                .extract()?,
        };
        let mut statics = self.statics.lock().map_err(poisoned)?;
        if let Some(found) = statics.get_mut(&key) {
            // A list of one launcher is what `run` launched with; an empty
            // one (not compiled yet) says nothing lasting.
            if let Ok(list) = launchers.cast::<PyList>()
                && list.len() == 1
                && let Ok(launcher) = list.get_item(0)
            {
                found.last = Some(Last {
                    launchers: launchers.clone().unbind(),
                    launcher: launcher.unbind(),
                    config: config.clone().unbind(),
                });
            }
            found
                .kernels
                .entry(config_key)
                .or_insert_with(|| (config.clone().unbind(), kernel));
            if let Some(sizes) = sizes {
                found
                    .grids
                    .entry(config_key)
                    .or_default()
                    .insert(sizes, grid.clone());
            }
        }
        Ok((kernel, grid))
    }
}

/// The config `run` launched with: its one launcher's, or before any is
/// compiled the first of the autotuner's configs.
fn config_of<'py>(
    py: Python<'py>,
    autotuner: &Bound<'py, PyAny>,
    launchers: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    if launchers.is_truthy()? {
        launchers.get_item(0)?.getattr(intern!(py, "config"))
    } else {
        autotuner.getattr(intern!(py, "configs"))?.get_item(0)
    }
}

/// Positions of the arguments that are not tensors.
fn scalar_positions(py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Vec<usize>> {
    let tensor = py
        .import(intern!(py, "torch"))?
        .getattr(intern!(py, "Tensor"))?;
    let mut positions = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        if !arg.is_instance(&tensor)? {
            positions.push(i);
        }
    }
    Ok(positions)
}

/// The scalar arguments as integers, or None when one is not a plain
/// `int` (its grid is then not cached). Reading them runs no Python code.
fn integer_scalars(args: &Bound<'_, PyTuple>, positions: &[usize]) -> Option<Sizes> {
    positions
        .iter()
        .map(|&i| {
            let arg = args.get_item(i).ok()?;
            arg.cast_exact::<PyInt>().ok()?.extract::<i64>().ok()
        })
        .collect()
}

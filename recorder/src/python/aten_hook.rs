//! The aten recorder's `__torch_dispatch__`, native: every eager aten op
//! in the recorded region comes through here, and a Python frame per op
//! (with the dynamo guard torch wraps around a Python `__torch_dispatch__`)
//! cost more than the rest of recording it.
//!
//! What is fixed per op (its name, which arguments it writes, whether it
//! allocates) comes from Python once (`tritontui.hooks.aten.plan`) and is
//! cached here, as is the kernel id of each argument shape it is called
//! with (`define`). An op is then one describe before it runs and one
//! launch record after. Any error is handed to the session's `fail`, which
//! stops recording; the op itself always runs, once.

use super::describe::{Described, is_tensor, is_tensor_subclass};
use super::dynamo_off::DynamoOff;
use super::hook_session::{HookSession, poisoned};
use super::observed_values::{ABSENT, ONE, SettledTexts, Shape};
use super::stand_in::{StandIn, stand_in};
use super::thread_state::in_launch;
use crate::phases::{Phase, timed};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// How one op is handled, fixed at its first call.
pub(super) struct Plan {
    /// Kept alive so that its address names it for the cache's lifetime.
    _func: Py<PyAny>,
    /// What runs the op (`OpOverload._op`: no Python frame).
    run: Py<PyAny>,
    /// None when the op is not recorded (views, ops that compute nothing,
    /// kernels the session's filter leaves out).
    pub(super) recorded: Option<Recorded>,
}

/// What a recorded op's launches share.
pub(super) struct Recorded {
    /// `aten::name`, for pause points.
    pub(super) name: String,
    /// The schema's arguments in order: name and access code.
    params: Vec<(Py<PyString>, u8)>,
    /// The schema's arguments' access codes, in order.
    pub(super) codes: Vec<u8>,
    /// What else is fixed for the op.
    pub(super) traits: Traits,
    /// Kernel id, result names and result codes by [`Shape`].
    kernels: Mutex<FxHashMap<Shape, Arc<Kernel>>>,
}

/// What is fixed for an op besides its name and arguments, as
/// `tritontui.hooks.aten.plan` answers it (a dict of bools).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(super) struct Traits {
    /// Allocations are not hashed before (their bytes mean nothing).
    pub(super) allocates: bool,
    /// Some results may be left unwritten, depending on the arguments
    /// (`tritontui._unwritten`): asked of Python at every call.
    pub(super) checks_unwritten: bool,
    /// A collective that returns before its results are there (a c10d
    /// op's `Work`, a functional collective): waited for before they are
    /// hashed.
    pub(super) waits: bool,
    /// Its results depend on numerics flags a program may switch while it
    /// runs (matmuls, convolutions, attention, ops with deterministic
    /// variants, large reductions): outside a graph call, the flags are
    /// sampled before it.
    pub(super) samples_settings: bool,
    /// It draws random numbers: the state of the generator it draws from
    /// is recorded as an input, after the schema's arguments.
    pub(super) draws_random: bool,
    /// A copy that may move a device tensor's bytes to the host (`.cpu()`
    /// is `_to_copy`, a host tensor's `copy_`): such a call is recorded
    /// as a kernel of its own that hands what it reads to the host.
    pub(super) may_copy_to_host: bool,
    /// An empty tensor: a 0-dim one may be Inductor's probe of a dtype's
    /// size (`tritontui.hooks.aten.dtype_probe`), not the program's work.
    pub(super) may_be_dtype_probe: bool,
    /// It writes only the arguments its schema marks written (an aten
    /// op): see [`Described::writes_declared`].
    pub(super) writes_declared: bool,
}

/// A kernel definition of one op called with one [`Shape`].
pub(super) struct Kernel {
    pub(super) id: u64,
    results: Vec<String>,
    pub(super) codes: Vec<u8>,
}

/// Ends the shape of a copy that moved device bytes to the host.
const TO_HOST: i32 = i32::MIN + 1;

/// `__torch_dispatch__` of the aten recorder of one session, bound to the
/// mode as a method: called as `hook(mode, func, types, args, kwargs)`.
#[pyclass(module = "tritontui._native", frozen)]
pub struct AtenHook {
    pub(super) session: HookSession,
    /// `tritontui._active`, whose `_ACTIVE` says which session records.
    active: Py<PyAny>,
    /// `tritontui.hooks.aten`: `plan`, `define` and `result_codes`.
    helpers: Py<PyAny>,
    plans: Mutex<FxHashMap<usize, Arc<Plan>>>,
    /// `torch._C._len_torch_dispatch_stack`: other modes than this one
    /// (which is off the stack while it runs) are rare, and one may trace.
    stack_len: Py<PyAny>,
    /// Optimizer steps begun and not ended (one optimizer's `step()` may
    /// call another's): a training step ends with the outermost.
    steps_open: AtomicU32,
    /// Whether its session records fingerprints alone (a hook is made
    /// again when steps recorded in full begin): then a host read inside
    /// an optimizer's step (its step count) is its own bookkeeping,
    /// fingerprinted with its state when the step ends, and not recorded.
    fingerprints: bool,
    /// The text of each dtype, layout, memory format and device argument
    /// read natively, by its value.
    pub(super) settled: SettledTexts,
}

/// What [`AtenHook::prepare`] decided for one call.
// A recorded call is a few hundred bytes (its shape inline, its described
// arguments' headers) that live on the stack for one op: boxing them would
// allocate per op.
#[allow(clippy::large_enum_variant)]
enum Prepared<'py> {
    /// It runs unrecorded.
    Run(Arc<Plan>),
    /// It is recorded: its arguments spread and described.
    Record(Arc<Plan>, Call<'py>, Described),
}

/// The arguments of one call, spread as the trace records them.
struct Call<'py> {
    values: Vec<Bound<'py, PyAny>>,
    codes: Vec<u8>,
    shape: Shape,
    /// Some tensor argument is of a subclass (a tracer's, maybe).
    subclass: bool,
}

/// A recorded call of an op that the native observer
/// ([`super::aten_observer`]) claimed, held from before it runs to after
/// (while it runs without the GIL).
pub(super) struct Observed {
    plan: Arc<Plan>,
    func: Py<PyAny>,
    args: Py<PyTuple>,
    kwargs: Option<Py<PyDict>>,
    values: Vec<Py<PyAny>>,
    codes: Vec<u8>,
    shape: Shape,
    subclass: bool,
    described: Described,
}

/// What [`AtenHook::observe_start`] makes of a call (its values made
/// Python objects: `R` is [`Observed`]), or what the hook makes of one
/// whose values are read natively (`super::aten_native`).
pub(super) enum Observation<R = Box<Observed>> {
    /// It is recorded: what it was described as, until it ends.
    Record(R),
    /// This call is not recorded (inside a launch, a tracer's, ...).
    NotRecorded,
    /// No call of this op is (a view, an op the session leaves out).
    NeverRecorded,
}

/// One call of an op, through the mode or an extern kernel's proxy.
struct OpCall<'a, 'py> {
    hook: &'a AtenHook,
    /// The `OpOverload` called.
    func: &'a Bound<'py, PyAny>,
    args: &'a Bound<'py, PyTuple>,
    kwargs: Option<&'a Bound<'py, PyDict>>,
}

impl<'py> StandIn<'py> for OpCall<'_, 'py> {
    type Prepared = Prepared<'py>;

    const PHASES: (Phase, Phase) = (Phase::AtenHook, Phase::AtenRun);

    /// An op is not counted as a launch: the mode is off the stack while
    /// it runs, and what it launches itself (a custom op's Triton kernel)
    /// is recorded as its own launch.
    const LAUNCH: bool = false;

    fn prepare(&self, py: Python<'py>) -> PyResult<Option<Self::Prepared>> {
        self.hook
            .prepare(py, self.func, self.args, self.kwargs)
            .map(Some)
    }

    fn run(
        &self,
        py: Python<'py>,
        prepared: Option<&Self::Prepared>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let run = match prepared {
            Some(Prepared::Run(plan) | Prepared::Record(plan, ..)) => plan.run.bind(py),
            None => self.func,
        };
        run.call(self.args, self.kwargs)
    }

    /// Only a recorded op has a record to write.
    fn finishes(prepared: &Self::Prepared) -> bool {
        matches!(prepared, Prepared::Record(..))
    }

    fn finish(
        &self,
        py: Python<'py>,
        prepared: Self::Prepared,
        out: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        match prepared {
            Prepared::Run(_) => Ok(()),
            Prepared::Record(plan, call, described) => {
                self.hook.finish(py, self, &plan, call, described, out)
            }
        }
    }

    fn fail(&self, py: Python<'py>, error: PyErr) {
        self.hook.session.fail(py, error);
    }
}

#[pymethods]
impl AtenHook {
    /// `session` is the recording session, whose `file`, `hash_inputs`,
    /// `hash_outputs`, `stats` and `breaks` are read now
    /// (`device_hashing` at every op).
    #[new]
    fn new(py: Python<'_>, session: Py<PyAny>, helpers: Py<PyAny>) -> PyResult<Self> {
        let fingerprints = session
            .bind(py)
            .getattr(intern!(py, "fingerprints_now"))?
            .extract()?;
        Ok(AtenHook {
            session: HookSession::new(py, session)?,
            active: py.import("tritontui._active")?.unbind().into_any(),
            helpers,
            plans: Mutex::new(FxHashMap::default()),
            stack_len: py
                .import("torch._C")?
                .getattr("_len_torch_dispatch_stack")?
                .unbind(),
            steps_open: AtomicU32::new(0),
            fingerprints,
            settled: SettledTexts::default(),
        })
    }

    #[pyo3(signature = (_mode, func, _types, args=None, kwargs=None))]
    fn __call__(
        &self,
        py: Python<'_>,
        _mode: &Bound<'_, PyAny>,
        func: &Bound<'_, PyAny>,
        _types: &Bound<'_, PyAny>,
        args: Option<&Bound<'_, PyTuple>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        self.dispatch(py, func, args, kwargs)
    }
}

impl AtenHook {
    /// Runs op `func` (an `OpOverload`) once, recording it: what the
    /// mode's `__torch_dispatch__` does, and what an extern kernel's
    /// native proxy does with the mode off the stack
    /// (`super::extern_hook`).
    pub(super) fn dispatch(
        &self,
        py: Python<'_>,
        func: &Bound<'_, PyAny>,
        args: Option<&Bound<'_, PyTuple>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let args = match args {
            Some(args) => args.clone(),
            None => PyTuple::empty(py),
        };
        let call = OpCall {
            hook: self,
            func,
            args: &args,
            kwargs: kwargs.filter(|k| !k.is_empty()),
        };
        stand_in(py, &call)
    }

    /// What the native observer does before op `func` runs: what the mode
    /// prepares, with Dynamo off (an error of the recorder's stops
    /// recording).
    pub(super) fn observe_start(
        &self,
        py: Python<'_>,
        func: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> Observation {
        let _timed = timed(Phase::AtenHook);
        let _off = DynamoOff::enter(py);
        match self.prepare(py, func, args, kwargs) {
            Ok(Prepared::Record(plan, call, described)) => {
                Observation::Record(Box::new(Observed {
                    plan,
                    func: func.clone().unbind(),
                    args: args.clone().unbind(),
                    kwargs: kwargs.map(|k| k.clone().unbind()),
                    values: call.values.into_iter().map(Bound::unbind).collect(),
                    codes: call.codes,
                    shape: call.shape,
                    subclass: call.subclass,
                    described,
                }))
            }
            Ok(Prepared::Run(plan)) if plan.recorded.is_none() => Observation::NeverRecorded,
            Ok(Prepared::Run(_)) => Observation::NotRecorded,
            Err(e) => {
                self.session.fail(py, e);
                Observation::NotRecorded
            }
        }
    }

    /// What the native observer does after a call it started returned
    /// `out`: what the mode finishes, with Dynamo off.
    pub(super) fn observe_end(
        &self,
        py: Python<'_>,
        observed: Box<Observed>,
        out: &Bound<'_, PyAny>,
    ) {
        let _timed = timed(Phase::AtenHook);
        let _off = DynamoOff::enter(py);
        let op = OpCall {
            hook: self,
            func: observed.func.bind(py),
            args: observed.args.bind(py),
            kwargs: observed.kwargs.as_ref().map(|k| k.bind(py)),
        };
        let call = Call {
            values: observed
                .values
                .into_iter()
                .map(|v| v.into_bound(py))
                .collect(),
            codes: observed.codes,
            shape: observed.shape,
            subclass: observed.subclass,
        };
        if let Err(e) = self.finish(py, &op, &observed.plan, call, observed.described, out) {
            self.session.fail(py, e);
        }
    }

    /// What to do with a call before it runs: run it unrecorded with what
    /// runs the op, or record it, its arguments described (an error: its
    /// plan failed, the op itself runs).
    fn prepare<'py>(
        &self,
        py: Python<'py>,
        func: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Prepared<'py>> {
        let plan = self.plan(py, func)?;
        let Some(recorded) = plan.recorded.as_ref().filter(|_| self.recording(py)) else {
            return Ok(Prepared::Run(plan));
        };
        if self.in_own_step() {
            return Ok(Prepared::Run(plan));
        }
        if recorded.traits.may_be_dtype_probe && self.dtype_probe(py, args) {
            return Ok(Prepared::Run(plan));
        }
        if recorded.traits.samples_settings && !self.session.in_graph_call(py) {
            let _timed = timed(Phase::AtenSettings);
            let sampled = self.helpers.bind(py).call_method1(
                intern!(py, "sample_settings"),
                (self.session.python.bind(py),),
            );
            if let Err(e) = sampled {
                self.session.fail(py, e);
                return Ok(Prepared::Run(plan));
            }
        }
        Ok(match self.before(py, recorded, func, args, kwargs) {
            Ok(Some((call, described))) => Prepared::Record(Arc::clone(&plan), call, described),
            Ok(None) => Prepared::Run(plan),
            Err(e) => {
                // Tensors without memory (a compiler tracing with fake
                // tensors under this mode) are not the program's work.
                if !self.traced(py, args, kwargs) {
                    self.session.unrecorded(py, &recorded.name, e);
                }
                Prepared::Run(plan)
            }
        })
    }

    /// Waits for a collective's results when they are to be hashed, then
    /// writes the launch record of a recorded call that returned `out`.
    fn finish<'py>(
        &self,
        py: Python<'py>,
        op: &OpCall<'_, 'py>,
        plan: &Plan,
        call: Call<'py>,
        mut described: Described,
        out: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let Some(recorded) = plan.recorded.as_ref() else {
            return Ok(());
        };
        if recorded.traits.waits && self.session.options.after.reads_results() {
            // An error here is the program's own wait's too, raised again
            // there.
            self.helpers
                .bind(py)
                .call_method1(intern!(py, "wait_for_collective"), (op.func, out))?;
        }
        if self.session.options.after.samples {
            // Where two programs' points are named: the module it ran in.
            described.module = self
                .helpers
                .bind(py)
                .call_method0(intern!(py, "module_path"))?
                .extract()?;
        }
        self.after(
            py,
            op.func,
            recorded,
            op.args,
            op.kwargs,
            call,
            out,
            &mut described,
        )
    }

    /// An optimizer's `step()` begins or ends on this thread, while this
    /// hook's session records (an error stops recording).
    pub(super) fn optimizer_step(&self, py: Python<'_>, begins: bool) {
        if !self.recording(py) {
            return;
        }
        let outermost = if begins {
            self.steps_open.fetch_add(1, Ordering::Relaxed) == 0
        } else {
            self.steps_open.fetch_sub(1, Ordering::Relaxed) == 1
        };
        let told =
            self.session
                .optimizer_step(py, begins)
                .and_then(|()| match (begins, outermost) {
                    (true, true) => self.session.optimizer_step_began(py),
                    (false, true) => self.session.step_ended(py, "optimizer"),
                    _ => Ok(()),
                });
        if let Err(e) = told {
            self.session.fail(py, e);
        }
    }

    /// Memory written where no op is recorded (see
    /// [`HookSession::forget`]).
    pub(super) fn forget(&self, py: Python<'_>, spans: &[(u64, u64)]) {
        if let Err(e) = self.session.forget(py, spans) {
            self.session.fail(py, e);
        }
    }

    /// Stops the session's recording after an internal error, once, with
    /// a warning.
    pub(super) fn fail(&self, py: Python<'_>, error: PyErr) {
        self.session.fail(py, error);
    }

    /// Whether an op now is the bookkeeping of an optimizer's step while
    /// fingerprints alone are recorded (see [`AtenHook::fingerprints`]).
    pub(super) fn in_own_step(&self) -> bool {
        self.fingerprints && self.steps_open.load(Ordering::Relaxed) > 0
    }

    /// Whether this hook's session is the one recording, and this thread
    /// is not inside a launch already being recorded.
    pub(super) fn recording(&self, py: Python<'_>) -> bool {
        !in_launch()
            && self
                .active
                .bind(py)
                .getattr(intern!(py, "_ACTIVE"))
                .is_ok_and(|active| active.is(self.session.python.bind(py)))
    }

    /// Whether the op is a tracer's rather than the program's, asked of
    /// `tritontui.hooks.aten.traced`: only for a call with a tensor
    /// subclass argument or with other modes on the stack, or whose
    /// describing failed (a plain call in a plain program never asks).
    fn traced(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> bool {
        self.helpers
            .bind(py)
            .call_method1(intern!(py, "traced"), (args, kwargs))
            .and_then(|answer| answer.extract())
            .unwrap_or(false)
    }

    /// Whether an empty tensor's creation is Inductor's probe of a dtype's
    /// size: asked of `tritontui.hooks.aten.dtype_probe` only for a 0-dim
    /// one (size `()`), an error counting as no.
    fn dtype_probe(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> bool {
        let scalar = args
            .get_item(0)
            .and_then(|size| size.len())
            .is_ok_and(|len| len == 0);
        scalar
            && self
                .helpers
                .bind(py)
                .call_method0(intern!(py, "dtype_probe"))
                .and_then(|answer| answer.extract())
                .unwrap_or(false)
    }

    /// The op's plan: cached, or asked of Python at its first call.
    pub(super) fn plan(&self, py: Python<'_>, func: &Bound<'_, PyAny>) -> PyResult<Arc<Plan>> {
        let key = func.as_ptr() as usize;
        if let Some(found) = self.plans.lock().map_err(poisoned)?.get(&key) {
            return Ok(Arc::clone(found));
        }
        let _off = DynamoOff::enter(py);
        type Answer = (
            Py<PyAny>,
            Option<String>,
            Vec<(Py<PyString>, u8)>,
            Option<Traits>,
        );
        let (run, name, params, traits): Answer = self
            .helpers
            .bind(py)
            .call_method1(intern!(py, "plan"), (self.session.python.bind(py), func))?
            .extract()?;
        let plan = Arc::new(Plan {
            _func: func.clone().unbind(),
            run,
            recorded: name.zip(traits).map(|(name, traits)| Recorded {
                name,
                codes: params.iter().map(|(_, code)| *code).collect(),
                params,
                traits,
                kernels: Mutex::new(FxHashMap::default()),
            }),
        });
        let mut plans = self.plans.lock().map_err(poisoned)?;
        Ok(Arc::clone(plans.entry(key).or_insert(plan)))
    }

    /// Spreads the call's arguments and describes them; None when the
    /// call is a tracer's (see [`AtenHook::traced`]), not recorded.
    fn before<'py>(
        &self,
        py: Python<'py>,
        recorded: &Recorded,
        func: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Option<(Call<'py>, Described)>> {
        let spread_timed = timed(Phase::AtenSpread);
        let mut call = spread(recorded, args, kwargs)?;
        let other_modes =
            || -> PyResult<bool> { Ok(self.stack_len.bind(py).call0()?.extract::<usize>()? > 0) };
        if (call.subclass || other_modes()?) && self.traced(py, args, kwargs) {
            return Ok(None);
        }
        drop(spread_timed);
        if recorded.traits.draws_random {
            let state = self
                .helpers
                .bind(py)
                .call_method1(intern!(py, "random_state"), (func, args, kwargs))?;
            call.values.push(state);
            call.codes.push(b'i');
        }
        let described = self.session.before(
            py,
            PyList::new(py, &call.values)?.as_any(),
            &call.codes,
            self.session.options.hash_inputs && !recorded.traits.allocates,
            None,
            &recorded.name,
        )?;
        Ok(Some((call, described)))
    }

    /// Adds the op's new tensors to its arguments and writes the launch
    /// record; an op that touched no tensor at all is not recorded.
    #[allow(clippy::too_many_arguments)]
    fn after<'py>(
        &self,
        py: Python<'py>,
        func: &Bound<'py, PyAny>,
        recorded: &Recorded,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
        mut call: Call<'py>,
        out: &Bound<'py, PyAny>,
        described: &mut Described,
    ) -> PyResult<()> {
        let results_timed = timed(Phase::AtenResults);
        let values: Vec<Bound<'py, PyAny>> =
            if out.is_instance_of::<PyTuple>() || out.is_instance_of::<PyList>() {
                out.try_iter()?.collect::<PyResult<_>>()?
            } else {
                vec![out.clone()]
            };
        let mut results = Vec::new();
        let mut touched = false;
        for value in &call.values {
            touched |= is_tensor(value)?;
        }
        call.shape.push(i32::MIN);
        for (i, value) in values.iter().enumerate() {
            if is_tensor(value)? && !call.values.iter().any(|given| given.is(value)) {
                call.shape.push(i as i32);
                results.push(value.clone());
            }
        }
        if !touched && results.is_empty() {
            return Ok(());
        }
        call.shape.push(values.len() as i32);
        if recorded.traits.may_copy_to_host
            && self
                .helpers
                .bind(py)
                .call_method1(intern!(py, "copies_to_host"), (func, args, kwargs, out))?
                .extract::<bool>()?
        {
            call.shape.push(TO_HOST);
        }
        let kernel = self.kernel(py, func, recorded, &call.shape, values.len())?;
        let codes = if recorded.traits.checks_unwritten {
            self.helpers
                .bind(py)
                .call_method1(
                    intern!(py, "result_codes"),
                    (func, args, kwargs, &kernel.results, &kernel.codes[..]),
                )?
                .extract()?
        } else {
            kernel.codes.clone()
        };
        let results = PyList::new(py, &results)?;
        drop(results_timed);
        described.writes_declared = recorded.traits.writes_declared;
        self.session.after(
            py,
            described,
            Some((results.as_any(), &codes)),
            kernel.id,
            Vec::new(),
            0,
        )
    }

    /// The kernel of this op called with this shape: cached, or defined by
    /// Python the first time.
    pub(super) fn kernel(
        &self,
        py: Python<'_>,
        func: &Bound<'_, PyAny>,
        recorded: &Recorded,
        shape: &Shape,
        returned: usize,
    ) -> PyResult<Arc<Kernel>> {
        if let Some(found) = recorded.kernels.lock().map_err(poisoned)?.get(shape) {
            return Ok(Arc::clone(found));
        }
        let _off = DynamoOff::enter(py);
        let to_host = shape.last() == Some(&TO_HOST);
        // Without the marker, the last entry is the count returned.
        let returned_at = shape.len() - 1 - usize::from(to_host);
        let spread: Vec<i32> = shape[..recorded.params.len()].to_vec();
        let positions: Vec<i32> = shape[recorded.params.len() + 1..returned_at].to_vec();
        let (id, results, codes): (u64, Vec<String>, Vec<u8>) = self
            .helpers
            .bind(py)
            .call_method1(
                intern!(py, "define"),
                (
                    self.session.python.bind(py),
                    func,
                    spread,
                    positions,
                    returned,
                    to_host,
                ),
            )?
            .extract()?;
        let kernel = Arc::new(Kernel { id, results, codes });
        let mut kernels = recorded.kernels.lock().map_err(poisoned)?;
        Ok(Arc::clone(kernels.entry(shape.clone()).or_insert(kernel)))
    }
}

/// Whether `value` is a list or a tuple.
fn is_sequence(value: &Bound<'_, PyAny>) -> bool {
    value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>()
}

/// The call's arguments in schema order, tensor lists (and lists of
/// tensor lists) spread out, each with its parameter's access code.
fn spread<'py>(
    recorded: &Recorded,
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Call<'py>> {
    let mut call = Call {
        values: Vec::with_capacity(recorded.params.len()),
        codes: Vec::with_capacity(recorded.params.len()),
        shape: Shape::new(),
        subclass: false,
    };
    for (i, (name, code)) in recorded.params.iter().enumerate() {
        let value = if i < args.len() {
            Some(args.get_item(i)?)
        } else if let Some(kwargs) = kwargs {
            kwargs.get_item(name.bind(args.py()))?
        } else {
            None
        };
        let Some(value) = value else {
            call.shape.push(ABSENT);
            continue;
        };
        let items = if is_sequence(&value) {
            let items: Vec<Bound<'py, PyAny>> = value.try_iter()?.collect::<PyResult<_>>()?;
            if !items.is_empty() && items.iter().all(is_sequence) {
                // A list of tensor lists (`Tensor[][]`, an all-gather's
                // outputs): spread out too, in order.
                let mut flat = Vec::new();
                for inner in &items {
                    for item in inner.try_iter()? {
                        flat.push(item?);
                    }
                }
                flat
            } else {
                items
            }
        } else {
            Vec::new()
        };
        let mut has_tensor = false;
        for item in &items {
            has_tensor |= is_tensor(item)?;
            call.subclass |= is_tensor_subclass(item)?;
        }
        call.subclass |= is_tensor_subclass(&value)?;
        if has_tensor {
            call.shape.push(items.len() as i32);
            call.codes.extend(std::iter::repeat_n(*code, items.len()));
            call.values.extend(items);
        } else {
            call.shape.push(ONE);
            call.codes.push(*code);
            call.values.push(value);
        }
    }
    Ok(call)
}

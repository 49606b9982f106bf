//! An aten op the native observer claimed, recorded from its values read
//! natively (`super::observed_values`): no Python object is made of its
//! call or its results, no Python helper runs and Dynamo's frame callback
//! is left alone (nothing runs that it could compile). The launch record
//! is the one the same op gives through Python (`AtenHook::prepare` and
//! `AtenHook::finish`), which every op whose plan or values need more
//! takes instead: a collective, a random op, a copy that may reach the
//! host, an op whose results may be left unwritten, a numerics-sensitive
//! op outside a graph call, a tensor subclass or a tracer's mode, a
//! session that observes, pauses at or samples its launches.

use super::aten_hook::{AtenHook, Observation, Plan, Recorded};
use super::describe::{Described, Read};
use super::observed_values::{ReadCall, Shape, ValueCalls, Values};
use crate::phases::{Phase, timed};
use pyo3::prelude::*;
use smallvec::SmallVec;
use std::sync::Arc;

/// A claimed op recorded natively, held from before it runs to after.
pub(super) struct NativeObserved {
    plan: Arc<Plan>,
    func: Py<PyAny>,
    shape: Shape,
    /// The tensors it was given, by `TensorImpl`.
    given: SmallVec<[usize; 8]>,
    described: Described,
}

impl AtenHook {
    /// What a claimed op (`func`, its `OpOverload`) makes before it runs,
    /// its values read natively: None when they, its plan or the session
    /// need Python (the caller then makes its call Python objects).
    /// `present` says which schema arguments Python would be handed;
    /// `settled_text` asks Python the text of a dtype (or layout, memory
    /// format, device) argument met for the first time.
    pub(super) fn observe_native(
        &self,
        py: Python<'_>,
        calls: &'static ValueCalls,
        call: Values,
        func: &Bound<'_, PyAny>,
        present: impl Fn(usize) -> bool,
        settled_text: impl Fn(usize) -> Option<String>,
    ) -> Option<Observation<Box<NativeObserved>>> {
        let _timed = timed(Phase::AtenHook);
        let plan = match self.plan(py, func) {
            Ok(plan) => plan,
            Err(e) => {
                self.session.fail(py, e);
                return Some(Observation::NotRecorded);
            }
        };
        let Some(recorded) = plan.recorded.as_ref() else {
            return Some(Observation::NeverRecorded);
        };
        if !self.recording(py) || self.in_own_step() {
            return Some(Observation::NotRecorded);
        }
        if !self.reads_natively(py, recorded) || calls.modes_on_stack() {
            return None;
        }
        let ReadCall {
            reads,
            codes,
            shape,
            given,
        } = calls.read_call(
            py,
            call,
            &recorded.codes,
            present,
            &self.settled,
            settled_text,
        )?;
        let hash_pre = self.session.options.hash_inputs && !recorded.traits.allocates;
        let described = match self.session.before_reads(py, reads, &codes, hash_pre) {
            Ok(described) => described,
            Err(e) => {
                self.session.unrecorded(py, &recorded.name, e);
                return Some(Observation::NotRecorded);
            }
        };
        Some(Observation::Record(Box::new(NativeObserved {
            plan: Arc::clone(&plan),
            func: func.clone().unbind(),
            shape,
            given,
            described,
        })))
    }

    /// What a claimed op recorded natively makes after it returned
    /// `outputs`: its new tensors added and its launch record written (an
    /// error of the recorder's stops recording).
    pub(super) fn observe_native_end(
        &self,
        py: Python<'_>,
        calls: &'static ValueCalls,
        observed: Box<NativeObserved>,
        outputs: Values,
    ) {
        let _timed = timed(Phase::AtenHook);
        if let Err(e) = self.finish_native(py, calls, *observed, outputs) {
            self.session.fail(py, e);
        }
    }

    /// Whether an op of this plan is recorded from its values read
    /// natively: nothing of it or of the session needs Python.
    fn reads_natively(&self, py: Python<'_>, recorded: &Recorded) -> bool {
        let traits = &recorded.traits;
        let options = &self.session.options;
        let python_helped = traits.checks_unwritten
            || traits.waits
            || traits.draws_random
            || traits.may_copy_to_host
            || traits.may_be_dtype_probe;
        !python_helped
            && !options.observes
            && !options.pauses
            && !options.after.samples
            // Outside a graph call, its numerics flags are sampled first.
            && (!traits.samples_settings || self.session.in_graph_call(py))
    }

    /// Adds the op's new tensors to its arguments and writes the launch
    /// record, as `AtenHook::after` does; an op that touched no tensor at
    /// all is not recorded.
    fn finish_native(
        &self,
        py: Python<'_>,
        calls: &'static ValueCalls,
        observed: NativeObserved,
        outputs: Values,
    ) -> PyResult<()> {
        let NativeObserved {
            plan,
            func,
            mut shape,
            given,
            mut described,
        } = observed;
        let Some(recorded) = plan.recorded.as_ref() else {
            return Ok(());
        };
        let (returned, results) = calls.results(py, outputs, &given)?;
        if given.is_empty() && results.is_empty() {
            return Ok(());
        }
        shape.push(i32::MIN);
        shape.extend(results.iter().map(|(position, _)| *position));
        shape.push(returned as i32);
        let kernel = self.kernel(py, func.bind(py), recorded, &shape, returned)?;
        let results: Vec<Read<'_>> = results.into_iter().map(|(_, read)| read).collect();
        described.writes_declared = recorded.traits.writes_declared;
        self.session
            .after_reads(py, &mut described, results, &kernel.codes, kernel.id)
    }
}

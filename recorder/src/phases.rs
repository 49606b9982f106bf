//! Where a recorded launch's host time goes: wall time summed per phase
//! of the recorder (a hook as a whole, the program's own call inside it,
//! describing, the launch record, the device hash tables, ...), for the
//! benchmarks (`scripts/_bench.py`, `launch_phases`). Off unless turned
//! on ([`set_enabled`]); off, a phase costs one relaxed atomic load.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// A phase of recording. Phases nest: a hook's phase holds the program's
/// own call and the recorder's work inside it. Declared in the order of
/// [`Phase::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The Triton hook, from the call of `run` to its return.
    TritonHook,
    /// The original `CachingAutotuner.run` inside the Triton hook.
    TritonRun,
    /// A C++ kernel's proxy (kernel included).
    CppKernelHook,
    /// The C++ kernel itself inside its proxy.
    CppKernelRun,
    /// The dispatch mode's handling of one aten op.
    AtenHook,
    /// The op itself inside the dispatch mode.
    AtenRun,
    /// A wrapper allocation's proxy.
    AllocationHook,
    /// The allocator itself inside the proxy.
    AllocationRun,
    /// Describing a launch's arguments before it runs (hashes before
    /// enqueued, deferred hashes gathered).
    Describe,
    /// The launch record after it runs (hashes after, data flow, queueing).
    LaunchRecord,
    /// A graph call's record (its inputs are described before it, under
    /// [`Phase::Describe`]).
    GraphCall,
    /// The end of a graph call (deferred hashes enqueued).
    GraphCallEnd,
    /// The numerics flags sampled.
    Numerics,
    /// One table of device hashes launched (`cuLaunchKernel`).
    HashTable,
    /// The event a device batch's results wait for, recorded.
    HashEvent,
    /// One tensor hashed on the host.
    HostHash,
    /// The native aten observer's start of a claimed op, whole (the GIL
    /// taken, the call made Python objects, the aten hook's prepare).
    ObserverStart,
    /// The native aten observer's end of a claimed op, whole.
    ObserverEnd,
    /// A claimed op's arguments made the Python call a dispatch mode sees.
    ObserverCall,
    /// A claimed op's results made Python objects.
    ObserverResults,
    /// An aten op's arguments spread as the trace records them (and the
    /// tracer checks).
    AtenSpread,
    /// An aten op's numerics flags sampled, outside a graph call.
    AtenSettings,
    /// An aten op's results found among what it returned, with its
    /// kernel and their access codes.
    AtenResults,
}

impl Phase {
    /// Every phase, in the order [`totals`] reports them.
    pub const ALL: [Phase; 23] = [
        Phase::TritonHook,
        Phase::TritonRun,
        Phase::CppKernelHook,
        Phase::CppKernelRun,
        Phase::AtenHook,
        Phase::AtenRun,
        Phase::AllocationHook,
        Phase::AllocationRun,
        Phase::Describe,
        Phase::LaunchRecord,
        Phase::GraphCall,
        Phase::GraphCallEnd,
        Phase::Numerics,
        Phase::HashTable,
        Phase::HashEvent,
        Phase::HostHash,
        Phase::ObserverStart,
        Phase::ObserverEnd,
        Phase::ObserverCall,
        Phase::ObserverResults,
        Phase::AtenSpread,
        Phase::AtenSettings,
        Phase::AtenResults,
    ];

    /// The phase's name in [`totals`].
    pub fn name(self) -> &'static str {
        match self {
            Phase::TritonHook => "triton hook",
            Phase::TritonRun => "triton run",
            Phase::CppKernelHook => "c++ kernel hook",
            Phase::CppKernelRun => "c++ kernel run",
            Phase::AtenHook => "aten hook",
            Phase::AtenRun => "aten run",
            Phase::AllocationHook => "allocation hook",
            Phase::AllocationRun => "allocation run",
            Phase::Describe => "describe",
            Phase::LaunchRecord => "launch record",
            Phase::GraphCall => "graph call record",
            Phase::GraphCallEnd => "graph call end",
            Phase::Numerics => "numerics sample",
            Phase::HashTable => "hash table launch",
            Phase::HashEvent => "hash event",
            Phase::HostHash => "host hash",
            Phase::ObserverStart => "observer start",
            Phase::ObserverEnd => "observer end",
            Phase::ObserverCall => "observer call",
            Phase::ObserverResults => "observer results",
            Phase::AtenSpread => "aten spread",
            Phase::AtenSettings => "aten settings",
            Phase::AtenResults => "aten results",
        }
    }
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static NANOS: [AtomicU64; Phase::ALL.len()] = [const { AtomicU64::new(0) }; Phase::ALL.len()];
static COUNTS: [AtomicU64; Phase::ALL.len()] = [const { AtomicU64::new(0) }; Phase::ALL.len()];

/// Turns the timing on or off, and clears the totals.
pub fn set_enabled(enabled: bool) {
    for total in NANOS.iter().chain(COUNTS.iter()) {
        total.store(0, Ordering::Relaxed);
    }
    ENABLED.store(enabled, Ordering::Relaxed);
}

/// Each phase's name, nanoseconds in all and times entered, since the
/// timing was turned on.
pub fn totals() -> Vec<(&'static str, u64, u64)> {
    Phase::ALL
        .iter()
        .enumerate()
        .map(|(i, phase)| {
            let nanos = NANOS[i].load(Ordering::Relaxed);
            (phase.name(), nanos, COUNTS[i].load(Ordering::Relaxed))
        })
        .collect()
}

/// Times `phase` until dropped (nothing when timing is off).
#[must_use = "the phase ends when this is dropped"]
pub fn timed(phase: Phase) -> Timed {
    let start = ENABLED.load(Ordering::Relaxed).then(Instant::now);
    Timed { phase, start }
}

/// A phase being timed; see [`timed`].
pub struct Timed {
    phase: Phase,
    start: Option<Instant>,
}

impl Drop for Timed {
    fn drop(&mut self) {
        if let Some(start) = self.start {
            let i = self.phase as usize;
            NANOS[i].fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
            COUNTS[i].fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_declared_in_the_order_of_all() {
        for (i, phase) in Phase::ALL.iter().enumerate() {
            assert_eq!(*phase as usize, i, "{phase:?}");
        }
    }

    #[test]
    fn a_phase_is_counted_only_while_timing_is_on() {
        set_enabled(false);
        drop(timed(Phase::Numerics));
        assert_eq!(
            totals()[Phase::Numerics as usize],
            ("numerics sample", 0, 0)
        );
        set_enabled(true);
        drop(timed(Phase::Numerics));
        drop(timed(Phase::Numerics));
        let (name, _, count) = totals()[Phase::Numerics as usize];
        assert_eq!((name, count), ("numerics sample", 2));
        set_enabled(false);
        assert_eq!(totals()[Phase::Numerics as usize].2, 0);
    }
}

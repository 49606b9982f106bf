//! What two runs' fingerprints say (`Analysis::fingerprints`): where they
//! first differ, by step, or that every one agrees.

use tritontui_engine::TracePair;
use tritontui_engine::fingerprints::{FingerprintComparison, FingerprintDifference, Parted};
use tritontui_trace::Trace;
use tritontui_trace::format::Scalar;

/// The lines `diff` and the report say of the fingerprints: the first
/// that differs (what, where, how), or that all agree.
pub fn lines(runs: TracePair<'_>, fingerprints: &FingerprintComparison) -> Vec<String> {
    let Some(first) = &fingerprints.first_difference else {
        let steps = match fingerprints.steps.a.max(fingerprints.steps.b) {
            Some(n) => format!(" over {n} step{}", if n == 1 { "" } else { "s" }),
            None => String::new(),
        };
        return vec![format!(
            "the {} fingerprints{steps} agree bit for bit (graph calls' outputs, host reads, \
             collectives, the state at each step's end)",
            fingerprints.counts.a
        )];
    };
    let mut lines = vec![headline(runs, first)];
    lines.push(match &first.what {
        Parted::Values { args } => {
            let (trace, launch) = side(runs, first);
            let kernel = trace.kernel_of(&trace.launches[launch]);
            if matches!(kernel.meta.get("digest"), Some(Scalar::Bool(true))) {
                // Its tensors' hashes were folded into one.
                format!(
                    "the one hash of all its {} differs: the window of steps recorded in full \
                     says which tensor and which kernel",
                    kernel.arg_name(0)
                )
            } else {
                let names: Vec<String> = args
                    .iter()
                    .take(4)
                    .map(|&i| format!("`{}`", kernel.arg_name(i)))
                    .collect();
                let more = args.len().saturating_sub(names.len());
                format!(
                    "{} of its {} argument{} hashed differently: {}{}",
                    args.len(),
                    kernel.args.len(),
                    if kernel.args.len() == 1 { "" } else { "s" },
                    names.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                )
            }
        }
        Parted::Calls => {
            let name = |trace: &Trace, i: Option<usize>| {
                i.map_or_else(|| "nothing".to_owned(), |i| what(trace, i))
            };
            format!(
                "the runs took different paths: run A recorded {} where run B recorded {}",
                name(runs.a, first.launches.a),
                name(runs.b, first.launches.b)
            )
        }
        Parted::Ended => {
            let ended = if first.launches.a.is_none() { "A" } else { "B" };
            format!("run {ended}'s fingerprints end here: it stopped, or ran fewer steps")
        }
    });
    lines
}

/// `fingerprints first differ at step 400 (graph call 2 of the step:
/// graph f7am…, A#213); steps before 400 agree`.
pub fn headline(runs: TracePair<'_>, first: &FingerprintDifference) -> String {
    let (trace, launch) = side(runs, first);
    let at = match first.step {
        Some(step) => format!("at step {step} "),
        None => String::new(),
    };
    let agree = match first.step {
        Some(0) if first.in_step == 0 => "; it is the runs' first fingerprint".to_owned(),
        Some(0) => format!("; the {} before it agree", first.in_step),
        Some(step) => format!("; steps before {step} agree"),
        None => String::new(),
    };
    format!(
        "fingerprints first differ {at}({}, fingerprint {} of the step, {}#{}){agree}",
        what(trace, launch),
        first.in_step + 1,
        if std::ptr::eq(trace, runs.a) {
            "A"
        } else {
            "B"
        },
        trace.launches[launch].seq,
    )
}

/// The run whose fingerprint is named (A's where it has one) and its
/// launch index.
pub fn side<'t>(runs: TracePair<'t>, first: &FingerprintDifference) -> (&'t Trace, usize) {
    match (first.launches.a, first.launches.b) {
        (Some(i), _) => (runs.a, i),
        (None, Some(i)) => (runs.b, i),
        // Never made: a difference is found at a fingerprint of one run.
        (None, None) => (runs.a, 0),
    }
}

/// What fingerprint `i` of `trace` is: `graph call f7am3vyo2zic`, `the
/// state at the step's end`, `host read aten::_local_scalar_dense`,
/// `collective c10d::allreduce_`.
pub fn what(trace: &Trace, i: usize) -> String {
    let kernel = trace.kernel_of(&trace.launches[i]);
    match kernel.meta.get("fingerprint") {
        Some(Scalar::Str(kind)) if kind == "call" => {
            let graph = kernel.name.trim_start_matches("graph ");
            format!("graph call {}", &graph[..graph.len().min(12)])
        }
        Some(Scalar::Str(kind)) if kind == "state" => "the state at the step's end".to_owned(),
        _ if matches!(kernel.meta.get("host_read"), Some(Scalar::Bool(true))) => {
            format!("host read {}", kernel.name)
        }
        _ if kernel.name.contains("c10d") => format!("collective {}", kernel.name),
        _ => format!("`{}`", kernel.name),
    }
}

/// What two runs recorded only as fingerprints say, parted at `step`:
/// `the runs part at step 1500; to find the kernel, record both again with
/// TRITONTUI_FROM_STEP=1499 TRITONTUI_TO_STEP=1500 (...)`.
pub fn where_to_look(step: Option<u64>) -> String {
    let window = match step {
        Some(0) => "TRITONTUI_TO_STEP=0".to_owned(),
        Some(step) => format!("TRITONTUI_FROM_STEP={} TRITONTUI_TO_STEP={step}", step - 1),
        None => "every step".to_owned(),
    };
    format!(
        "the runs part{}; to find the kernel, record both again with {window} (`tritontui \
         check --steps` does it all)",
        step.map_or(String::new(), |s| format!(" at step {s}"))
    )
}

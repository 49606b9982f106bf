//! What the traces did not see (the engine's gaps), in words.

use tritontui_engine::gaps::Gap;

/// One gap in words.
pub fn gap(gap: &Gap) -> String {
    match gap {
        Gap::Stopped { error } => {
            let said = error
                .as_ref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default();
            format!(
                "recording stopped after an internal error of the recorder{said}; the program went on unrecorded"
            )
        }
        Gap::EndedEarly { why } => {
            format!("the trace ended early ({why}): what the program did after it is unseen")
        }
        Gap::CudaGraphsDisabled => {
            "the recorder turned CUDA graphs off: the program without it replays them".to_owned()
        }
        Gap::GraphHashesMissing { graph, why } => {
            format!(
                "CUDA graph {graph}: its launches' hashes are missing from every replay ({why})"
            )
        }
        Gap::ReplaysUnhashed { count } => format!(
            "{count} CUDA graph replays' hashes did not come back: their launches are unhashed"
        ),
        Gap::UnrecordedGraph { graph, why } => {
            format!("graph {graph} ({why}) ran without its launches recorded")
        }
        Gap::KernelsFiltered { glob } => {
            format!("only kernels matching `{glob}` were recorded (kernels=)")
        }
        Gap::NotHashed => {
            "no tensor was hashed (hash=\"none\"): the runs' bits were not compared".to_owned()
        }
        Gap::Recorder {
            what,
            detail,
            times,
        } => {
            let detail = if detail.is_empty() {
                format!("not recorded: {what}")
            } else {
                format!("not recorded: {what}: {detail}")
            };
            match times {
                1 => detail,
                n => format!("{detail} ({n} times)"),
            }
        }
    }
}

/// What the two traces did not see (their gaps), each said once, with
/// the run it concerns when only one has it.
pub fn unseen_work(a: &[Gap], b: &[Gap]) -> Vec<String> {
    let mut said: Vec<String> = a
        .iter()
        .map(|g| {
            if b.contains(g) {
                gap(g)
            } else {
                format!("{} (A)", gap(g))
            }
        })
        .collect();
    said.extend(
        b.iter()
            .filter(|g| !a.contains(g))
            .map(|g| format!("{} (B)", gap(g))),
    );
    said
}

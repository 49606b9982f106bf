//! `tritontui lint TRACE [--profile FILE]`: every recorded launch checked
//! against a constraint profile (what a target accepts: dtypes, alignment,
//! contiguity, tensor sizes, kernels and ops), the offline form of a mock
//! accelerator backend's checks. Profiles are small TOML files
//! ([`profile`]); two ship with the tool.

pub mod profile;

use profile::{Devices, Profile};
use serde::Serialize;
use tritontui_trace::{ArgRef, Trace};

/// One launch argument (or launch) a rule refuses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The launch's number.
    pub seq: u64,
    pub kernel: String,
    /// The argument's name; None when the rule is about the kernel.
    pub arg: Option<String>,
    /// The rule's key in the profile.
    pub rule: &'static str,
    pub detail: String,
}

/// What `lint` found.
#[derive(Debug, Serialize)]
pub struct LintReport {
    pub trace: String,
    /// The profiles' descriptions, in the order applied.
    pub profiles: Vec<String>,
    pub launches: usize,
    pub violations: Vec<Violation>,
}

/// Checks every program launch of `trace` against each profile.
pub fn lint(trace: &Trace, profiles: &[Profile]) -> LintReport {
    let mut violations = Vec::new();
    let mut launches = 0;
    for (_, launch) in trace.program_launches() {
        launches += 1;
        let kernel = trace.kernel_of(launch);
        for profile in profiles {
            let mut refuse = |arg: Option<String>, rule: &'static str, detail: String| {
                violations.push(Violation {
                    seq: launch.seq,
                    kernel: kernel.name.clone(),
                    arg,
                    rule,
                    detail,
                });
            };
            if let Some(glob) = profile.denied_kernel(&kernel.name) {
                refuse(None, "kernels.deny", format!("matches {glob:?}"));
            }
            for (i, arg) in trace.args_of(launch).enumerate() {
                let ArgRef::Tensor(t) = arg else { continue };
                let on_device = launch.device >= 0;
                let applies = match profile.devices {
                    Devices::Any => true,
                    Devices::Cuda => on_device,
                    Devices::Cpu => !on_device,
                };
                if !applies || t.allocated {
                    continue;
                }
                for (rule, detail) in profile.tensor_violations(t.layout, t.ptr) {
                    refuse(Some(kernel.arg_name(i).to_owned()), rule, detail);
                }
            }
        }
    }
    LintReport {
        trace: trace.path.display().to_string(),
        profiles: profiles.iter().map(|p| p.description.clone()).collect(),
        launches,
        violations,
    }
}

/// The human summary: one line per violation, then the count.
pub fn summary(report: &LintReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for v in &report.violations {
        let arg = v.arg.as_deref().map_or(String::new(), |a| format!(" {a}"));
        let _ = writeln!(
            out,
            "#{} {}{arg}: {}: {}",
            v.seq, v.kernel, v.rule, v.detail
        );
    }
    let _ = writeln!(
        out,
        "{}: {} launches checked against {}: {}",
        report.trace,
        report.launches,
        report.profiles.join("; "),
        match report.violations.len() {
            0 => "no violation".to_owned(),
            1 => "1 violation".to_owned(),
            n => format!("{n} violations"),
        }
    );
    out
}

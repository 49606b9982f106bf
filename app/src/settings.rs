//! What differs between two runs' settings: versions, devices, world size
//! and the header's `settings` (numerics flags, non-default configs,
//! environment variables). Shown before anything else in a comparison,
//! since a difference there is often the whole answer.

use serde::Serialize;
use std::collections::BTreeSet;
use tritontui_trace::format::Header;

/// One setting whose value differs; None where a run does not have it
/// (a config at its default, a variable not set).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SettingDiff {
    pub name: String,
    pub a: Option<String>,
    pub b: Option<String>,
}

/// The settings of run A and run B that differ, versions first, then by
/// name.
pub fn differences(a: &Header, b: &Header) -> Vec<SettingDiff> {
    let mut out = Vec::new();
    let mut push = |name: &str, x: Option<String>, y: Option<String>| {
        if x != y {
            out.push(SettingDiff {
                name: name.to_owned(),
                a: x,
                b: y,
            });
        }
    };
    push("torch", a.torch.clone(), b.torch.clone());
    push("triton", a.triton.clone(), b.triton.clone());
    push("cuda", a.cuda.clone(), b.cuda.clone());
    let devices = |h: &Header| (!h.devices.is_empty()).then(|| h.devices.join(", "));
    push("devices", devices(a), devices(b));
    let world = |h: &Header| h.distributed.as_ref().map(|d| d.world_size.to_string());
    push("world_size", world(a), world(b));
    let names: BTreeSet<&String> = a.settings.keys().chain(b.settings.keys()).collect();
    for name in names {
        push(
            name,
            a.settings.get(name).cloned(),
            b.settings.get(name).cloned(),
        );
    }
    out
}

/// The differences that can change the code Inductor generates or how it
/// launches it: versions, devices, Inductor's config and its variables.
pub fn affecting_code(a: &Header, b: &Header) -> Vec<SettingDiff> {
    differences(a, b)
        .into_iter()
        .filter(|d| {
            ["torch", "triton", "cuda", "devices"].contains(&d.name.as_str())
                || d.name.starts_with("inductor.")
                || d.name.starts_with("env.TORCHINDUCTOR_")
        })
        .collect()
}

/// `NAME: A | B` lines, `(unset)` for a side without it.
pub fn lines(differences: &[SettingDiff]) -> Vec<String> {
    let side = |v: &Option<String>| v.clone().unwrap_or_else(|| "(unset)".into());
    differences
        .iter()
        .map(|d| format!("{}: {} | {}", d.name, side(&d.a), side(&d.b)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_come_first_and_a_setting_one_run_lacks_is_unset() {
        let mut a = Header::new("test");
        let mut b = Header::new("test");
        a.torch = Some("2.11.0".into());
        b.torch = Some("2.10.0".into());
        a.settings.insert("torch.num_threads".into(), "2".into());
        b.settings.insert("torch.num_threads".into(), "2".into());
        b.settings
            .insert("inductor.fallback_random".into(), "True".into());
        let found = differences(&a, &b);
        assert_eq!(
            lines(&found),
            [
                "torch: 2.11.0 | 2.10.0",
                "inductor.fallback_random: (unset) | True"
            ]
        );
        assert!(differences(&a, &a).is_empty());
    }
}

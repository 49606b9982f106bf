//! What differs between two runs' settings: versions, devices, world size
//! and the header's `settings` (numerics flags, non-default configs,
//! environment variables). Shown before anything else in a comparison,
//! since a difference there is often the whole answer.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use tritontui_trace::Trace;
use tritontui_trace::format::{Header, Scalar};

/// One setting whose value differs; None where a run does not have it
/// (a config at its default, a variable not set).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SettingDiff {
    /// The setting's name (`torch.backends.cuda.matmul.allow_tf32`).
    pub name: String,
    /// Its value in run A.
    pub a: Option<String>,
    /// Its value in run B.
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

/// Whether a setting changes results silently where a kernel runs (a
/// numerics flag, threads, the cuBLAS workspace), so that it can explain a
/// launch whose inputs are equal and whose outputs differ.
fn is_numerics(name: &str) -> bool {
    name.starts_with("torch.")
        || name.starts_with("env.CUBLAS")
        || name == "env.NVIDIA_TF32_OVERRIDE"
        || name == "env.OMP_NUM_THREADS"
}

/// The numerics settings in force at launch `seq` of `trace`: the header's,
/// updated by the last `settings` record before it.
fn numerics_at(trace: &Trace, seq: u64) -> BTreeMap<&str, &str> {
    let mut now: BTreeMap<&str, &str> = trace
        .header
        .settings
        .iter()
        .filter(|(name, _)| is_numerics(name))
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    let changes = &trace.settings_changes;
    let last = changes.partition_point(|c| c.before <= seq);
    if let Some(change) = last.checked_sub(1).map(|i| &changes[i]) {
        for (name, value) in &change.values {
            now.insert(name, value);
        }
    }
    now
}

/// The numerics settings in force that differ between launch `seq_a` of
/// run A and launch `seq_b` of run B.
pub fn numerics_differ_at(a: &Trace, seq_a: u64, b: &Trace, seq_b: u64) -> Vec<SettingDiff> {
    differing(&numerics_at(a, seq_a), &numerics_at(b, seq_b))
}

/// The settings that can explain why launch `seq_a` of run A and launch
/// `seq_b` of run B, of one kernel of `backend` (`cpp`, `triton`), wrote
/// other bits from equal inputs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Explaining {
    /// The numerics settings in force that differ.
    pub numerics: Vec<SettingDiff>,
    /// The entries for the kernel's backend (`inductor.cpp.`,
    /// `inductor.triton.`) of the Inductor config that differ between the
    /// compiles that made it: they build the same source otherwise (the C++
    /// compiler's floating-point contraction, say). Empty when a trace
    /// does not say.
    pub compiled: Vec<SettingDiff>,
}

impl Explaining {
    /// What explains launch `seq_a` of run A against `seq_b` of run B, of
    /// a kernel of `backend`.
    pub fn at(a: &Trace, seq_a: u64, b: &Trace, seq_b: u64, backend: &str) -> Explaining {
        let prefix = format!("inductor.{backend}.");
        let compiled = compiles_differ_at(a, seq_a, b, seq_b)
            .unwrap_or_default()
            .into_iter()
            .filter(|d| !backend.is_empty() && d.name.starts_with(&prefix))
            .collect();
        Explaining {
            numerics: numerics_differ_at(a, seq_a, b, seq_b),
            compiled,
        }
    }

    /// Whether nothing explains it.
    pub fn is_empty(&self) -> bool {
        self.numerics.is_empty() && self.compiled.is_empty()
    }
}

/// The entries whose values differ between run A's settings `x` and run
/// B's `y`, by name (None where a run lacks one).
fn differing(x: &BTreeMap<&str, &str>, y: &BTreeMap<&str, &str>) -> Vec<SettingDiff> {
    let names: BTreeSet<&str> = x.keys().chain(y.keys()).copied().collect();
    names
        .into_iter()
        .filter(|name| x.get(name) != y.get(name))
        .map(|name| SettingDiff {
            name: name.to_owned(),
            a: x.get(name).map(|v| (*v).to_owned()),
            b: y.get(name).map(|v| (*v).to_owned()),
        })
        .collect()
}

/// The Inductor config entries not at their defaults (`inductor.NAME` to
/// its value) while the graph that launch `seq` of `trace` ran in was
/// compiled: the `inductor.` entries of the `fx_graph_cache` record whose
/// key names the graph of the last call before the launch. None when the
/// trace does not say: written before format 1.17, the launch after no
/// graph call, or that graph's compile not seen (compiled before
/// recording began, or with Inductor's caches off).
pub fn compiled_with(trace: &Trace, seq: u64) -> Option<BTreeMap<&str, &str>> {
    if trace.header.version < (1, 17) {
        return None;
    }
    let called = trace.calls.partition_point(|call| call.before <= seq);
    let graph = &trace.calls[called.checked_sub(1)?].graph;
    let compile = trace.compiles.iter().rev().find(|c| {
        c.event == "fx_graph_cache"
            && matches!(c.info.get("key"), Some(Scalar::Str(key)) if key.as_str() == &**graph)
    })?;
    Some(
        compile
            .info
            .iter()
            .filter(|(name, _)| name.starts_with("inductor."))
            .filter_map(|(name, value)| match value {
                Scalar::Str(value) => Some((name.as_str(), value.as_str())),
                _ => None,
            })
            .collect(),
    )
}

/// The Inductor config entries that differ between the compiles that made
/// the kernels of launch `seq_a` of run A and launch `seq_b` of run B (an
/// entry at its default is unset); None when either trace does not say
/// (see [`compiled_with`]).
pub fn compiles_differ_at(
    a: &Trace,
    seq_a: u64,
    b: &Trace,
    seq_b: u64,
) -> Option<Vec<SettingDiff>> {
    Some(differing(
        &compiled_with(a, seq_a)?,
        &compiled_with(b, seq_b)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use tritontui_trace::TraceWriter;
    use tritontui_trace::format::{ArgValue, CallRecord, CompileRecord, GraphDef, Record};

    /// A trace with two graphs called before launches 0 and 5; the first
    /// compiled with the Inductor config entries of `config` set (its cache
    /// record seen), the second compiled before recording began (none
    /// seen).
    fn compiled_trace(config: &[(&str, &str)]) -> Trace {
        let mut w = TraceWriter::new(Vec::new(), &Header::new("test")).expect("header");
        let graph = |id: u64, key: &str| {
            Record::Graph(GraphDef {
                id,
                key: key.into(),
                inputs: vec![],
            })
        };
        let call = |graph: u64, before: u64| {
            Record::Call(CallRecord {
                graph,
                before,
                device: -1,
                first: 0,
                args: vec![ArgValue::Scalar(Scalar::Int(1))],
            })
        };
        let mut info = BTreeMap::new();
        info.insert("key".to_owned(), Scalar::Str("fone".into()));
        for (name, value) in config {
            info.insert((*name).to_owned(), Scalar::Str((*value).into()));
        }
        info.insert("state".to_owned(), Scalar::Str("miss".into()));
        w.write(&Record::Compile(CompileRecord {
            event: "fx_graph_cache".into(),
            name: "0/0".into(),
            pid: 1,
            ts: 0,
            dur_ns: 0,
            info,
        }))
        .expect("compile");
        for record in [graph(1, "fone"), call(1, 0), graph(2, "ftwo"), call(2, 5)] {
            w.write(&record).expect("record");
        }
        let bytes = w.finish(0, "exit").expect("finish");
        Trace::from_bytes(Path::new("t"), &bytes).expect("load")
    }

    #[test]
    fn a_launch_s_compile_config_is_its_graph_s_and_unknown_where_the_trace_cannot_say() {
        let trace = compiled_trace(&[("inductor.cpp.simdlen", "1")]);
        let seen = compiled_with(&trace, 3).expect("the first graph's compile was seen");
        assert_eq!(
            seen.into_iter().collect::<Vec<_>>(),
            [("inductor.cpp.simdlen", "1")]
        );
        // The second graph compiled before recording: nothing to say.
        assert_eq!(compiled_with(&trace, 5), None);
        let mut old = compiled_trace(&[("inductor.cpp.simdlen", "1")]);
        old.header.version = (1, 16);
        assert_eq!(compiled_with(&old, 3), None);
        // The same trace on both sides: the compiles agree.
        assert_eq!(compiles_differ_at(&trace, 3, &trace, 4), Some(vec![]));
        assert_eq!(compiles_differ_at(&trace, 3, &trace, 6), None);
    }

    #[test]
    fn a_kernel_is_explained_by_the_config_of_its_own_backend_it_was_compiled_with() {
        let a = compiled_trace(&[
            ("inductor.cpp.enable_floating_point_contract_flag", "'fast'"),
            ("inductor.triton.persistent_reductions", "False"),
            ("inductor.max_autotune", "True"),
        ]);
        let b = compiled_trace(&[]);
        let names = |found: Explaining| {
            assert!(found.numerics.is_empty());
            found
                .compiled
                .into_iter()
                .map(|d| d.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(Explaining::at(&a, 3, &b, 3, "cpp")),
            ["inductor.cpp.enable_floating_point_contract_flag"]
        );
        assert_eq!(
            names(Explaining::at(&a, 3, &b, 3, "triton")),
            ["inductor.triton.persistent_reductions"]
        );
        // An aten op's kernel, or a launch after a graph whose compile was
        // not seen: no config to explain it.
        assert!(Explaining::at(&a, 3, &b, 3, "").is_empty());
        assert!(Explaining::at(&a, 6, &b, 6, "cpp").is_empty());
    }

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
        let differ = differences(&a, &b);
        let found: Vec<(&str, Option<&str>, Option<&str>)> = differ
            .iter()
            .map(|d| (d.name.as_str(), d.a.as_deref(), d.b.as_deref()))
            .collect();
        assert_eq!(
            found,
            [
                ("torch", Some("2.11.0"), Some("2.10.0")),
                ("inductor.fallback_random", None, Some("True"))
            ]
        );
        assert!(differences(&a, &a).is_empty());
    }
}

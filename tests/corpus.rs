//! The corpus of real recorded pairs (`tests/corpus/NAME/`): the engine's
//! verdict, first divergence and root causes on each pair must be the ones
//! written down in its `expected.json`, and that expectation must agree
//! with the bitwise fingerprints of the two runs' results
//! (`fingerprints.json`), which were taken without the engine.

use serde_json::Value;
use std::path::{Path, PathBuf};
use tritontui::Report;
use tritontui::output::report::DivergenceReport;
use tritontui_engine::analysis::Verdict;
use tritontui_engine::{Analysis, Options};
use tritontui_trace::Trace;

fn pairs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/corpus is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("expected.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// A pair's name, its `expected.json` and its `fingerprints.json`.
fn pair_files(dir: &Path) -> (String, Value, Value) {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    (
        name.into_owned(),
        read_json(&dir.join("expected.json")),
        read_json(&dir.join("fingerprints.json")),
    )
}

fn read_json(path: &Path) -> Value {
    let parsed = std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()));
    assert!(parsed.is_ok(), "{}: {:?}", path.display(), parsed.err());
    parsed.unwrap_or_default()
}

fn field<'v>(value: &'v Value, key: &str) -> &'v str {
    value[key].as_str().unwrap_or_default()
}

/// `kernel kind impact` of a divergence, as the expectation names it.
fn described(d: &DivergenceReport) -> String {
    format!("{} {} {}", d.kernel, d.kind.as_str(), d.impact.as_str())
}

fn expected_words(value: &Value) -> String {
    format!(
        "{} {} {}",
        field(value, "kernel"),
        field(value, "kind"),
        field(value, "impact")
    )
}

/// Whether run B's results stay within the accuracy minifier's `same()`
/// rule of run A's against a float64 run of the program
/// (`fingerprints.json`'s `fp64_error`); None when the pair has no
/// float64 run. The rule, as torch 2.11's `same()` applies it: B's root
/// mean square error at most `multiplier` times A's plus a tenth of its
/// tolerance 1e-4, the multiplier 3 for a float16 or bfloat16 result or
/// one of fewer than 1,000 elements, else 2.
///
/// Pairs recorded before the float64 errors carried the root mean square
/// error compare relative errors (the same ratio); those recorded before
/// they carried element counts hold each result's relative error alone,
/// and there a result must be within, or past, with either multiplier (a
/// result whose answer depends on it fails the test: record the pair
/// again).
///
/// A pair of two dtypes (float32 against bfloat16 autocast) says
/// `fp64_bound` instead: each of run B's results within that relative
/// error of the float64 run (what the coarser dtype allows).
fn within_same_rule(fingerprints: &Value, expected: &Value) -> Option<bool> {
    let errors = &fingerprints["fp64_error"];
    let (a, b) = (errors["a"].as_object()?, errors["b"].as_object()?);
    let bound = expected["fp64_bound"].as_f64();
    Some(a.iter().all(|(name, error_a)| {
        let error_b = b.get(name).unwrap_or(&Value::Null);
        let relative_b = error_b["relative"]
            .as_f64()
            .or(error_b.as_f64())
            .unwrap_or(f64::INFINITY);
        if let Some(bound) = bound {
            return relative_b <= bound;
        }
        if let Some(numel) = error_b["numel"].as_u64() {
            let multiplier = same_multiplier(error_b["dtype"].as_str().unwrap_or_default(), numel);
            // The root mean square error where the pair holds it, else
            // the relative one (of the same float64 values, so the same
            // ratio).
            let measure = |error: &Value| error["rmse"].as_f64().or(error["relative"].as_f64());
            return match (measure(error_a), measure(error_b)) {
                (Some(a), Some(b)) => b <= multiplier * a + 1e-5,
                _ => false,
            };
        }
        let relative_a = error_a.as_f64().unwrap_or(0.0);
        let (twice, thrice) = (
            relative_b <= 2.0 * relative_a + 1e-5,
            relative_b <= 3.0 * relative_a + 1e-5,
        );
        assert_eq!(
            twice, thrice,
            "{name}: within same()'s rule or not depends on its element count, which this \
             pair's fingerprints.json does not hold: record the pair again"
        );
        twice
    }))
}

/// `torch._dynamo.utils.same`'s multiplier for a result of `dtype` and
/// `numel` elements.
fn same_multiplier(dtype: &str, numel: u64) -> f64 {
    if matches!(dtype, "float16" | "bfloat16") || numel < 1000 {
        3.0
    } else {
        2.0
    }
}

/// The options `diff` is given for a pair: `--request A:N B:M` where
/// expected.json names the request compared in each run (`"request":
/// {"a": N, "b": M}`), the defaults otherwise.
fn options_of(expected: &Value) -> Options {
    let mut options = Options::default();
    let request = &expected["request"];
    if let (Some(a), Some(b)) = (request["a"].as_u64(), request["b"].as_u64()) {
        options.requests.index = (a, b);
    }
    options
}

#[test]
fn every_pair_gets_its_expected_verdict() {
    let pairs = pairs();
    assert!(pairs.len() >= 8, "the corpus has {} pairs", pairs.len());
    let mut failures = Vec::new();
    for dir in &pairs {
        let (name, expected, fingerprints) = pair_files(dir);
        let results_differ = fingerprints["differ"]
            .as_array()
            .is_some_and(|d| !d.is_empty());
        let verdict = field(&expected, "verdict");
        // `inconclusive` claims nothing about the results; every other
        // verdict must say what the fingerprints say.
        let differing_verdict = matches!(verdict, "divergent" | "equivalent");
        assert!(
            verdict == "inconclusive" || differing_verdict == results_differ,
            "{name}: expected.json says {verdict}, but the fingerprints say the results {}",
            if results_differ { "differ" } else { "agree" }
        );
        // Two programs' numerics verdicts take their truth from a float64
        // run of the program: `equivalent` only where run B stays within
        // same()'s rule of run A, `accuracy` only where it does not.
        let within = within_same_rule(&fingerprints, &expected);
        if verdict == "equivalent" {
            assert_eq!(
                within,
                Some(true),
                "{name}: equivalent, but the float64 run says otherwise"
            );
        }
        if expected["first_divergence"]["kind"] == "accuracy" {
            assert_eq!(
                within,
                Some(false),
                "{name}: accuracy, but the float64 run says within"
            );
        }
        let a = Trace::open(&dir.join("a.msgpack")).expect("run A loads");
        let b = Trace::open(&dir.join("b.msgpack")).expect("run B loads");
        let analysis = Analysis::run(&a, &b, options_of(&expected));
        let report = Report::new(&a, &b, &analysis, usize::MAX);
        let got = |what: &str, value: String, want: String| {
            (value != want).then(|| format!("{name}: {what} is `{value}`, expected `{want}`"))
        };
        failures.extend(got(
            "the verdict",
            report.verdict.as_str().to_owned(),
            verdict.to_owned(),
        ));
        // Two programs on purpose (another config, model or path), or one
        // program run twice: the traces must say which.
        failures.extend(got(
            "whether the runs ran different programs",
            report.programs.any().to_string(),
            expected["programs_differ"]
                .as_bool()
                .unwrap_or(false)
                .to_string(),
        ));
        failures.extend(got(
            "the first divergence",
            report
                .first_divergence
                .as_ref()
                .map(described)
                .unwrap_or_default(),
            expected
                .get("first_divergence")
                .filter(|v| !v.is_null())
                .map(expected_words)
                .unwrap_or_default(),
        ));
        // What the first divergence's words must say, where the pair asks.
        if let Some(words) = expected["first_divergence"]["detail_contains"].as_str() {
            let detail = report
                .first_divergence
                .as_ref()
                .map(|d| d.detail.clone())
                .unwrap_or_default();
            if !detail.contains(words) {
                failures.push(format!(
                    "{name}: the first divergence says `{detail}`, not `{words}`"
                ));
            }
        }
        // The step of the first divergence, where the pair says it.
        if let Some(step) = expected["first_divergence"]["step"].as_u64() {
            failures.extend(got(
                "the first divergence's step",
                format!(
                    "{:?}",
                    report.first_divergence.as_ref().and_then(|d| d.step)
                ),
                format!("{:?}", Some(step)),
            ));
        }
        // Where fingerprints first differ (runs recorded with
        // `fingerprint`), or that they agree, where the pair says.
        let parted = report
            .fingerprints
            .as_ref()
            .and_then(|f| f.first_difference.as_ref());
        if let Some(want) = expected.get("fingerprints_first_differ") {
            failures.extend(got(
                "where the fingerprints first differ",
                parted.map_or_else(String::new, |d| {
                    let what = d.what.split_whitespace().take(2).collect::<Vec<_>>();
                    format!("{:?} {} {}", d.step, what.join(" "), d.parted)
                }),
                format!(
                    "{:?} {} {}",
                    want["step"].as_u64(),
                    field(want, "what"),
                    field(want, "parted")
                ),
            ));
        }
        if expected["fingerprints_agree"] == true
            && (report.fingerprints.is_none() || parted.is_some())
        {
            failures.push(format!("{name}: the fingerprints do not agree"));
        }
        // What the batch and numerics comparisons must say, where the pair
        // asks.
        let details = [
            (
                "batch_detail_contains",
                "the batch comparison",
                report.batch.as_ref().map(|b| &b.detail),
            ),
            (
                "accuracy_detail_contains",
                "the numerics comparison",
                report.accuracy.as_ref().map(|a| &a.detail),
            ),
        ];
        for (key, what, detail) in details {
            let Some(words) = expected[key].as_str() else {
                continue;
            };
            let detail = detail.map(|lines| lines.join("\n")).unwrap_or_default();
            if !detail.contains(words) {
                failures.push(format!("{name}: {what} says `{detail}`, not `{words}`"));
            }
        }
        // How many launches before the root cause the batch comparison
        // could not judge, where the pair says.
        if let Some(count) = expected["batch_unjudged"].as_u64() {
            let unjudged = report.batch.as_ref().map(|b| b.unjudged as u64);
            if unjudged != Some(count) {
                failures.push(format!(
                    "{name}: the batch comparison left {unjudged:?} launches unjudged, expected {count}"
                ));
            }
        }
        failures.extend(got(
            "the root causes",
            report
                .root_causes
                .iter()
                .map(described)
                .collect::<Vec<_>>()
                .join("; "),
            expected["root_causes"]
                .as_array()
                .map(|roots| {
                    roots
                        .iter()
                        .map(expected_words)
                        .collect::<Vec<_>>()
                        .join("; ")
                })
                .unwrap_or_default(),
        ));
        // Two runs compared show that a kernel gave other bits on equal
        // inputs, not why: without a rerun of it alone the words say so.
        for root in &report.root_causes {
            if root.kind == tritontui_engine::Kind::NondeterministicKernel
                && !root.detail.contains("unconfirmed")
            {
                failures.push(format!(
                    "{name}: root cause {} is called nondeterministic without a rerun: {}",
                    described(root),
                    root.detail
                ));
            }
        }
        // Only a pair that says so (`"host_values_differ": true`: its runs
        // pass the host other values, such as another seed) may blame one.
        let host_values_differ = expected["host_values_differ"] == true;
        for root in &report.root_causes {
            if !host_values_differ
                && root
                    .origin
                    .as_deref()
                    .is_some_and(|o| o.contains("passed by the host"))
            {
                failures.push(format!(
                    "{name}: root cause {} blames a host value",
                    described(root)
                ));
            }
        }
        let verdict_ok = match report.verdict {
            Verdict::Identical | Verdict::Benign => !results_differ,
            Verdict::Divergent => results_differ,
            Verdict::Equivalent => results_differ && within == Some(true),
            Verdict::Inconclusive => true,
        };
        if !verdict_ok {
            failures.push(format!(
                "{name}: the engine's verdict contradicts the fingerprints"
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Against the float64 run of its program (`reference.msgpack`, `diff
/// --reference`), a pair of two programs is judged by the accuracy
/// minifier's rule point by point: `equivalent` exactly where the results
/// of that float64 run say run B stays within the rule, else an
/// `accuracy` root cause.
#[test]
fn every_pair_with_a_reference_is_judged_as_its_float64_run_says() {
    let mut judged = 0;
    let mut failures = Vec::new();
    for dir in pairs() {
        let Ok(reference) = Trace::open(&dir.join("reference.msgpack")) else {
            continue;
        };
        let (name, expected, fingerprints) = pair_files(&dir);
        let within = within_same_rule(&fingerprints, &expected);
        let a = Trace::open(&dir.join("a.msgpack")).expect("run A loads");
        let b = Trace::open(&dir.join("b.msgpack")).expect("run B loads");
        let analysis = Analysis::run_against(&a, &b, Some(&reference), Options::default());
        let report = Report::new(&a, &b, &analysis, usize::MAX);
        let first = report.first_divergence.as_ref().map(|d| d.kind);
        let agrees = match within {
            Some(true) => report.verdict == Verdict::Equivalent,
            _ => first == Some(tritontui_engine::Kind::Accuracy),
        };
        if !agrees {
            failures.push(format!(
                "{name}: against its reference, {} (first divergence {first:?}), but the float64 run says {}",
                report.verdict.as_str(),
                if within == Some(true) { "within" } else { "past" }
            ));
        }
        judged += 1;
    }
    assert!(judged >= 4, "{judged} pairs have a reference");
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

//! End-to-end tests of the `tritontui` binary: exit codes, output, errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn tritontui(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tritontui"))
        .args(args)
        .output()
        .expect("run tritontui")
}

/// A trace of the synthetic pair in tests/fixtures (its root cause is the
/// index_add at #19 of both runs, and 30 divergences follow it).
fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/synthetic")
        .join(name)
        .display()
        .to_string()
}

/// A trace of corpus pair `pair` (`a.msgpack`, `b.msgpack`, ...).
fn corpus_trace(pair: &str, name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus")
        .join(pair)
        .join(name)
        .display()
        .to_string()
}

#[test]
fn the_bundled_gpu_demo_has_one_root_cause_the_atomic_index_add() {
    let real = |name: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../assets/demo")
            .join(name)
            .display()
            .to_string()
    };
    let o = tritontui(&[
        "diff",
        "--json",
        &real("run0.msgpack"),
        &real("run1.msgpack"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(report["root_causes"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        report["first_divergence"]["kind"],
        "nondeterministic-kernel"
    );
    assert_eq!(
        report["first_divergence"]["kernel"],
        "triton_poi_fused_index_add_zeros_1"
    );
    assert!(
        report["runs"]["a"]["devices"][0]
            .as_str()
            .unwrap_or("")
            .contains("NVIDIA")
    );
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes a synthetic pair into a fresh directory.
fn synth(args: &[&str]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().display().to_string();
    let mut all = vec!["tritontui-synth", "-o", out.as_str()];
    all.extend_from_slice(args);
    tritontui_synth::cli::run_args(all).expect("synth");
    let (a, b) = (
        dir.path().join("run0.msgpack"),
        dir.path().join("run1.msgpack"),
    );
    (dir, a, b)
}

#[test]
fn help_lists_the_product_s_subcommands_and_no_test_tool() {
    let o = tritontui(&["--help"]);
    assert!(o.status.success());
    let text = stdout(&o);
    let listed = |sub: &str| text.lines().any(|l| l.trim_start().starts_with(sub));
    for sub in ["diff", "check", "record", "ranks", "report", "attach"] {
        assert!(listed(sub), "{sub} missing from:\n{text}");
    }
    // Synthetic traces are the tritontui-synth crate's, not the app's.
    assert!(!listed("synth"), "synth is a test tool, listed in:\n{text}");
    assert_eq!(tritontui(&["synth", "-o", "out"]).status.code(), Some(2));
}

#[test]
fn the_synthetic_pair_diverges_at_the_atomic_kernel() {
    let o = tritontui(&["diff", &fixture("run0.msgpack"), &fixture("run1.msgpack")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(
            "first divergence  A#19 B#19  triton_poi_fused_index_add_5  nondeterministic-kernel"
        ),
        "{text}"
    );
    assert!(text.contains("root causes (1)"), "{text}");
}

#[test]
fn the_json_report_has_the_documented_fields() {
    let o = tritontui(&[
        "diff",
        "--json",
        &fixture("run0.msgpack"),
        &fixture("run1.msgpack"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    assert_eq!(report["verdict"], "divergent");
    assert_eq!(report["launches"]["a"], 48);
    assert_eq!(report["launches"]["b"], 48);
    assert_eq!(report["launches"]["matched"], 48);
    let first = &report["first_divergence"];
    assert_eq!(first["kind"], "nondeterministic-kernel");
    assert_eq!(first["a_index"], 19);
    assert_eq!(first["b_index"], 19);
    assert_eq!(first["kernel"], "triton_poi_fused_index_add_5");
    assert_eq!(
        first["args"],
        serde_json::json!(["out_ptr0", "in_out_ptr0"])
    );
    assert!(first["producer"].is_null());
    let roots = report["root_causes"].as_array().expect("root_causes");
    assert_eq!(roots.len(), 1);
    assert_eq!(roots[0]["a_index"], 19);
    // A propagated divergence names its producer and how it was reached.
    let next = &report["divergences"][1];
    assert_eq!(next["kind"], "divergent-input");
    assert_eq!(next["root_cause"], false);
    assert_eq!(next["producer"]["a_index"], 19);
    assert_eq!(next["producer"]["kernel"], "triton_poi_fused_index_add_5");
    assert_eq!(next["root"]["a_index"], 19);
}

/// One request alone against it in a batch of 64 (`rows`): the batch
/// section names the first batch-variant launch; `--request` picks
/// another row of B, whose inputs already differ, and bad values of the
/// flags are one-line errors.
#[test]
fn a_request_is_compared_by_its_rows_between_two_batchings() {
    let pair = |name: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/corpus/batch_row0")
            .join(name)
            .display()
            .to_string()
    };
    let (a, b) = (pair("a.msgpack"), pair("b.msgpack"));
    let o = tritontui(&["diff", "--json", &a, &b]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        report["batch"]["batch"],
        serde_json::json!({"a": 1, "b": 64})
    );
    assert_eq!(
        report["batch"]["first_variant"]["kernel"],
        "aten::addmm.out"
    );
    assert_eq!(report["first_divergence"]["kind"], "batch-variant");
    let text = stdout(&tritontui(&["diff", &a, &b]));
    assert!(text.contains("batch (request rows):"), "{text}");
    assert!(
        text.contains("first batch-variant launch: A#5 B#5"),
        "{text}"
    );
    // Row 1 of B is another request: what the first launch reads differs,
    // so no launch is batch-variant.
    let o = tritontui(&["diff", "--json", "--request", "A:0", "B:1", &a, &b]);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        report["batch"]["request"],
        serde_json::json!({"a": 0, "b": 1})
    );
    assert!(
        report["batch"]["first_variant"].is_null(),
        "{}",
        report["batch"]
    );
    assert_eq!(
        report["batch"]["first_read_differing"],
        serde_json::json!({"a": 3, "b": 3}),
        "{}",
        report["batch"]
    );
    for bad in [
        // Past run B's batch of 64, found from the traces.
        vec!["--request", "A:0", "B:64"],
        vec!["--request", "A:x", "B:1"],
        vec!["--request", "A:0", "A:1"],
        vec!["--batch", "A:0", "B:64"],
        vec!["--batch", "A:1", "B:64", "--request", "A:1", "B:0"],
    ] {
        let o = tritontui(&[&["diff"], bad.as_slice(), &[a.as_str(), b.as_str()]].concat());
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stdout(&o));
        let error = stderr(&o);
        assert!(
            error.lines().count() == 1
                && (error.contains("--request") || error.contains("--batch")),
            "{bad:?}: {error}"
        );
    }
    // Traces recorded without rows cannot compare a request.
    let without = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/planted_rounding");
    let (a, b) = (without.join("a.msgpack"), without.join("b.msgpack"));
    let o = tritontui(&[
        "diff",
        "--request",
        "A:0",
        "B:0",
        &a.display().to_string(),
        &b.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("holds no row hashes"), "{}", stderr(&o));
}

/// Eager against compiled, with samples: `equivalent`, exit 0; the
/// planted rounding: `accuracy` at the kernel that rounds, exit 1.
#[test]
fn two_programs_numerics_decide_the_exit_status() {
    let pair = |name: &str, side: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/corpus")
            .join(name)
            .join(side)
            .display()
            .to_string()
    };
    let diff = |name: &str| {
        tritontui(&[
            "diff",
            "--json",
            &pair(name, "a.msgpack"),
            &pair(name, "b.msgpack"),
        ])
    };
    let equivalent = diff("eager_against_compiled");
    assert_eq!(equivalent.status.code(), Some(0), "{}", stderr(&equivalent));
    let report: serde_json::Value = serde_json::from_str(&stdout(&equivalent)).expect("json");
    assert_eq!(report["verdict"], "equivalent");
    assert_eq!(report["report_version"], 4);
    assert!(report["accuracy"]["first_past_bound"].is_null(), "{report}");
    assert!(report["root_causes"].as_array().is_some_and(Vec::is_empty));
    // The eager run's points name the module each op ran in.
    let modules: Vec<&str> = report["accuracy"]["aligned"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["a_module"].as_str())
        .collect();
    assert!(
        modules.contains(&"1.norm") && modules.contains(&"3.fc"),
        "{modules:?}"
    );
    let planted = diff("planted_rounding");
    assert_eq!(planted.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_str(&stdout(&planted)).expect("json");
    let past = &report["accuracy"]["first_past_bound"];
    assert!(
        past["b_kernel"]
            .as_str()
            .is_some_and(|k| k.ends_with("_round_2")),
        "{past}"
    );
    assert!(
        past["relative_error"].as_f64() > past["bound"].as_f64(),
        "{past}"
    );
    assert_eq!(report["root_causes"][0]["kind"], "accuracy");
    // A whole bf16 autocast step: the results differ, no point is shown
    // to be a bug, and the summary says so instead of "0 root causes".
    let step = |side: &str| pair("autocast_bf16_step", side);
    let o = tritontui(&["diff", &step("a.msgpack"), &step("b.msgpack")]);
    assert_eq!(o.status.code(), Some(1));
    let summary = stdout(&o);
    assert!(
        summary.contains("their numerics name no root cause")
            && summary.contains("past their bound, not called root causes")
            && !summary.contains("0 root causes"),
        "{summary}"
    );
}

/// A run whose program raised says so beside it, in the summary and the
/// JSON, and the launches the other run made after that are not run in
/// it (`raised_midway`: run B raised torch.OutOfMemoryError at step 2).
#[test]
fn a_run_whose_program_raised_says_what_it_raised() {
    let raised = |side: &str| corpus_trace("raised_midway", side);
    let o = tritontui(&["diff", &raised("a.msgpack"), &raised("b.msgpack")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let summary = stdout(&o);
    assert!(
        summary.contains("52 launches  torch")
            && summary.contains("(its program raised torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB)")
            && summary.contains("not run in B: its program raised torch.OutOfMemoryError"),
        "{summary}"
    );
    let o = tritontui(&["diff", "--json", &raised("a.msgpack"), &raised("b.msgpack")]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert!(
        report["runs"]["a"]["raised"].is_null(),
        "{}",
        report["runs"]
    );
    let b = &report["runs"]["b"];
    assert_eq!(b["complete"], true);
    assert_eq!(
        b["raised"],
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB"
    );
}

/// `--reference R`: the accuracy minifier's rule against a float64 run
/// of the program decides where R has a counterpart; a reference trace
/// without samples is an error naming it.
#[test]
fn a_reference_run_judges_two_programs_by_the_minifier_s_rule() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let file = |pair: &str, name: &str| corpus.join(pair).join(name).display().to_string();
    let diff = |pair: &str, reference: &str| {
        tritontui(&[
            "diff",
            "--json",
            &file(pair, "a.msgpack"),
            &file(pair, "b.msgpack"),
            "--reference",
            reference,
        ])
    };
    let equivalent = diff(
        "eager_against_compiled",
        &file("eager_against_compiled", "reference.msgpack"),
    );
    assert_eq!(equivalent.status.code(), Some(0), "{}", stderr(&equivalent));
    let report: serde_json::Value = serde_json::from_str(&stdout(&equivalent)).expect("json");
    let checked = report["accuracy"]["aligned"]
        .as_array()
        .map_or(0, |points| {
            points.iter().filter(|p| !p["reference"].is_null()).count()
        });
    assert!(
        checked > 100,
        "{checked} points checked against the reference"
    );
    let coverage = report["accuracy"]["detail"].to_string();
    assert!(
        coverage.contains("against the reference run (443 points): 413 of 413 aligned points and 61 of 61 differing results have their counterpart in it")
            && !coverage.contains("the others"),
        "{coverage}"
    );
    assert_eq!(report["accuracy"]["reference_points"], 443);
    // A reference that ran less of the program (here another program's)
    // leaves points to their bounds, and the summary says how many.
    let partial = diff(
        "eager_against_compiled",
        &file("planted_rounding", "reference.msgpack"),
    );
    let report: serde_json::Value = serde_json::from_str(&stdout(&partial)).expect("json");
    let coverage = report["accuracy"]["detail"].to_string();
    assert!(
        coverage.contains("against the reference run (180 points): 73 of 413 aligned points and 0 of 61 differing results have their counterpart in it; the others are judged by their estimated bounds"),
        "{coverage}"
    );
    let planted = diff(
        "planted_rounding",
        &file("planted_rounding", "reference.msgpack"),
    );
    assert_eq!(planted.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_str(&stdout(&planted)).expect("json");
    assert_eq!(report["root_causes"][0]["kind"], "accuracy");
    assert_eq!(report["accuracy"]["results_within_reference"], false);
    // Every result within the rule: an intermediate past it is absorbed,
    // not a root cause.
    let absorbed = diff(
        "gpt_intermediate_past_rule",
        &file("gpt_intermediate_past_rule", "reference.msgpack"),
    );
    assert_eq!(absorbed.status.code(), Some(0), "{}", stderr(&absorbed));
    let report: serde_json::Value = serde_json::from_str(&stdout(&absorbed)).expect("json");
    assert_eq!(report["verdict"], "equivalent");
    assert_eq!(report["accuracy"]["results_within_reference"], true);
    assert!(report["accuracy"]["first_past_bound"].is_null(), "{report}");
    let detail = report["accuracy"]["detail"].to_string();
    assert!(
        detail.contains(
            "1 aligned point past the accuracy minifier's rule against the reference run, absorbed"
        ),
        "{detail}"
    );
    // A trace recorded without samples cannot be a reference.
    let unsampled = file("config_code", "a.msgpack");
    let refused = diff("eager_against_compiled", &unsampled);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains(&unsampled) && stderr(&refused).contains("no samples"),
        "{}",
        stderr(&refused)
    );
}

/// `record` on a program that ran and recorded nothing (its Python does
/// not start the recorder, or it is no Python) says so, naming the
/// trace, and fails instead of saying where it recorded.
#[test]
fn a_recording_that_wrote_nothing_is_an_error_naming_the_trace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = dir.path().join("t.msgpack").display().to_string();
    let o = tritontui(&["record", "-o", &trace, "--", "true"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(
        said.contains(&format!("{trace}: `true` ran but recorded nothing there"))
            && !said.contains("recorded to"),
        "{said}"
    );
    // A trace of the name left by an earlier run is not this run's.
    std::fs::write(dir.path().join("t.msgpack"), b"old").expect("write");
    let file = std::fs::File::options()
        .write(true)
        .open(dir.path().join("t.msgpack"))
        .expect("open");
    file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(60))
        .expect("set mtime");
    let o = tritontui(&["record", "-o", &trace, "--", "true"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // What a program writes there counts: a rank trace beside the name,
    // or a name whose placeholder it filled in; a name it did not fill in
    // the same way does not.
    let wrote = |output: &str, written: &str| {
        let script = format!("echo x > {}", dir.path().join(written).display());
        let output = dir.path().join(output).display().to_string();
        tritontui(&["record", "-o", &output, "--", "sh", "-c", &script])
    };
    for (output, written, code) in [
        ("t.msgpack", "t-rank1.msgpack", 0),
        ("u.msgpack", "u-rankx.msgpack", 2),
        ("p{pid}.msgpack", "p123.msgpack", 0),
        ("s{pid}.msgpack", "s123-rank0.msgpack", 0),
        ("r{pid}.msgpack", "q123.msgpack", 2),
    ] {
        let o = wrote(output, written);
        assert_eq!(
            o.status.code(),
            Some(code),
            "{output} {written}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn identical_runs_exit_zero() {
    let (_dir, a, b) = synth(&["-n", "300", "--autotune"]);
    let o = tritontui(&["diff", a.to_str().expect("utf8"), b.to_str().expect("utf8")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("identical: 300 launches aligned"),
        "{}",
        stdout(&o)
    );
    let o = tritontui(&[
        "diff",
        "--json",
        a.to_str().expect("utf8"),
        b.to_str().expect("utf8"),
    ]);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(report["verdict"], "identical");
    assert!(report["first_divergence"].is_null());
}

#[test]
fn synth_reports_what_it_injected_and_diff_finds_it() {
    let (_dir, a, b) = synth(&["-n", "200", "--inject", "config@70"]);
    let o = tritontui(&[
        "diff",
        "--json",
        a.to_str().expect("utf8"),
        b.to_str().expect("utf8"),
    ]);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(report["first_divergence"]["kind"], "launch-config");
    assert_eq!(report["first_divergence"]["a_index"], 70);
}

/// Runs `diff` on a bad file and checks for a one-line error naming it.
fn assert_bad_file(bytes: &[u8], expect: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.msgpack");
    std::fs::write(&bad, bytes).expect("write");
    let o = tritontui(&[
        "diff",
        bad.to_str().expect("utf8"),
        &fixture("run1.msgpack"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&bad.display().to_string()) && err.contains(expect),
        "{err:?} lacks {expect:?}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_input_is_a_one_line_error_and_exit_two() {
    assert_bad_file(b"", "the file is empty");
    assert_bad_file(b"{\"not\": \"msgpack\"}", "not a tritontui trace");
    let demo_bytes = std::fs::read(fixture("run0.msgpack")).expect("demo");
    let mut corrupt = demo_bytes.clone();
    let middle = corrupt.len() / 2;
    corrupt[middle..middle + 16].fill(0xc1);
    assert_bad_file(&corrupt, "byte ");

    let o = tritontui(&[
        "diff",
        "/nonexistent/run0.msgpack",
        &fixture("run1.msgpack"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("/nonexistent/run0.msgpack: cannot read"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_truncated_trace_is_compared_with_a_warning() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cut = dir.path().join("cut.msgpack");
    let bytes = std::fs::read(fixture("run1.msgpack")).expect("demo");
    std::fs::write(&cut, &bytes[..bytes.len() - 300]).expect("write");
    let o = tritontui(&[
        "diff",
        "--json",
        &fixture("run0.msgpack"),
        cut.to_str().expect("utf8"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("the trace ended early (truncated at byte"),
        "{}",
        stderr(&o)
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(report["runs"]["b"]["complete"], false);
}

#[test]
fn a_run_cut_short_is_inconclusive_not_divergent() {
    // Run B is run A cut short: its missing tail was not seen, not absent.
    let dir = tempfile::tempdir().expect("tempdir");
    let cut = dir.path().join("cut.msgpack");
    let bytes = std::fs::read(fixture("run0.msgpack")).expect("fixture");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).expect("write");
    let o = tritontui(&[
        "diff",
        "--json",
        &fixture("run0.msgpack"),
        cut.to_str().expect("utf8"),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(report["verdict"], "inconclusive");
    assert_eq!(report["gaps"]["b"][0]["kind"], "ended-early");
    let first = &report["first_divergence"];
    assert_eq!(
        (&first["kind"], &first["impact"]),
        (&"structural".into(), &"unseen".into())
    );
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let (_dir, a, b) = synth(&["-n", "3000", "--inject", "nondet@5"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_tritontui"))
        .args([
            "diff",
            "--json",
            a.to_str().expect("utf8"),
            b.to_str().expect("utf8"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

/// The visible text of an HTML page as headless Chromium renders it (to a
/// PDF, read back with pdftotext), or None when the tools are missing and
/// TRITONTUI_SKIP_BROWSER is set.
fn rendered_text(page: &std::path::Path) -> Option<String> {
    let have = |tool: &str| Command::new(tool).arg("--version").output().is_ok();
    if !have("chromium") || !have("pdftotext") {
        assert!(
            std::env::var_os("TRITONTUI_SKIP_BROWSER").is_some(),
            "this test needs chromium and pdftotext (apt-get install chromium poppler-utils); \
             set TRITONTUI_SKIP_BROWSER=1 to skip it"
        );
        eprintln!("skipped: chromium or pdftotext missing");
        return None;
    }
    let pdf = page.with_extension("pdf");
    let printed = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-pdf-header-footer",
        ])
        .arg(format!("--print-to-pdf={}", pdf.display()))
        .arg(page)
        .output()
        .expect("chromium");
    assert!(
        pdf.exists(),
        "chromium printed nothing: {}",
        stderr(&printed)
    );
    let text = Command::new("pdftotext")
        .args(["-layout"])
        .arg(&pdf)
        .arg("-")
        .output()
        .expect("pdftotext");
    Some(stdout(&text))
}

#[test]
fn the_html_report_says_which_launch_makes_a_request_depend_on_its_batch() {
    let html = corpus_page("batch_row0");
    assert!(
        html.contains("One request in two batches"),
        "no batch section"
    );
    assert!(
        html.contains("first batch-variant launch: A#5 B#5 `aten::addmm.out`"),
        "the batch-variant launch is not named"
    );
}

#[test]
fn the_html_report_renders_the_verdict_root_cause_source_and_folded_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let page = dir.path().join("report.html");
    let o = tritontui(&[
        "report",
        &fixture("run0.msgpack"),
        &fixture("run1.msgpack"),
        "-o",
        &page.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).expect("the page");
    // Self-contained: nothing to fetch, no script.
    for outside in ["http://", "https://", "<script", "<link", "src="] {
        assert!(!html.contains(outside), "the page refers to {outside}");
    }
    // The folded run's rows are in the file...
    assert!(
        html.contains("<td>#2</td><td>triton_poi_fused_embedding_0</td>"),
        "the folded rows are missing from the HTML"
    );
    let Some(text) = rendered_text(&page) else {
        return;
    };
    for shown in [
        "divergent",
        "nondeterministic-kernel",
        "triton_poi_fused_index_add_5",
        "Root causes (1)",
        "… 17 equal launches (A #2–#18) …",
        "↑ atomic update",
        "out_ptr0",
    ] {
        assert!(
            text.contains(shown),
            "{shown:?} is not on the page:\n{text}"
        );
    }
    // ...but folded away on screen.
    let visible_folded = text.lines().any(|l| {
        let words: Vec<&str> = l.split_whitespace().collect();
        words
            .windows(2)
            .any(|w| w == ["#2", "triton_poi_fused_embedding_0"])
    });
    assert!(!visible_folded, "a folded row is visible:\n{text}");
}

/// `tritontui report` of a real corpus pair, as HTML.
fn corpus_page(pair: &str) -> String {
    let pair = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus")
        .join(pair);
    let dir = tempfile::tempdir().expect("tempdir");
    let page = dir.path().join("report.html");
    let o = tritontui(&[
        "report",
        &pair.join("a.msgpack").display().to_string(),
        &pair.join("b.msgpack").display().to_string(),
        "-o",
        &page.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::read_to_string(&page).expect("the page")
}

#[test]
fn the_html_report_shows_differing_settings_and_compilations_first() {
    let settings = corpus_page("config_code");
    let table = settings.find("<h2>Settings that differ</h2>");
    assert!(
        settings.contains("<td>inductor.cpp.simdlen</td><td>(unset)</td><td>1</td>"),
        "{settings}"
    );
    assert!(
        table.is_some() && table < settings.find("<h2>First divergence</h2>"),
        "{settings}"
    );
    let recompiled = corpus_page("recompile_batch");
    assert!(
        recompiled.contains("<h2>Compiled differently</h2>")
            && recompiled.contains("B recompiled inner (compile 0/1)")
            && recompiled.contains("GLOBAL_STATE changed: grad_mode"),
        "{recompiled}"
    );
    let planted = corpus_page("planted_rounding");
    assert!(
        planted.contains("<h2>Different programs</h2>")
            && planted.contains("kernels only B launched: 4 (`cpp_fused_add_div_gelu_mul_native_layer_norm_native_layer_norm_backward_round_2`"),
        "{planted}"
    );
    assert!(
        planted.contains("<h2>Numerics</h2>") && planted.contains("fill=\"#c0392b\""),
        "a point past its bound is drawn red: {planted}"
    );
    // The error by layer: the planted block's layer norm after it has the
    // points past their bound, the blocks before it none.
    assert!(
        planted.contains("<tr><td><code>0.norm</code></td><td>6</td>")
            && planted.contains("<td><code>2.norm</code></td><td>7</td><td>3.5e-3</td><td>3</td>"),
        "{planted}"
    );
    // A pair of runs that differ in none has none of these sections.
    let plain = corpus_page("absorbed_atomics");
    assert!(
        !plain.contains("Settings that differ")
            && !plain.contains("Compiled differently")
            && !plain.contains("Different programs")
    );
}

#[test]
fn a_benign_pair_exits_0_and_says_why() {
    let pair = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/absorbed_atomics");
    let path = |run: &str| pair.join(run).display().to_string();
    let out = tritontui(&["diff", &path("a.msgpack"), &path("b.msgpack")]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("benign: 2 divergences"), "{text}");
    assert!(
        text.contains("absorbed by A#4 cpp_fused__to_copy_argmax_gt_0, whose outputs agree"),
        "{text}"
    );
    let json = tritontui(&["diff", "--json", &path("a.msgpack"), &path("b.msgpack")]);
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap_or_default();
    assert_eq!(report["verdict"], "benign");
    assert_eq!(report["root_causes"][0]["impact"], "absorbed");
    assert_eq!(report["absorbed_count"], 1);
}

/// Writes a synthetic run of `ranks` ranks (run0/ and run1/) into a fresh
/// directory.
fn synth_ranks(ranks: u32, args: &[&str]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().display().to_string();
    let count = ranks.to_string();
    let mut all = vec![
        "tritontui-synth",
        "-o",
        out.as_str(),
        "--ranks",
        count.as_str(),
    ];
    all.extend_from_slice(args);
    tritontui_synth::cli::run_args(all).expect("synth");
    let (a, b) = (dir.path().join("run0"), dir.path().join("run1"));
    (dir, a, b)
}

#[test]
fn runs_of_ranks_name_the_rank_a_fault_started_on() {
    let (_dir, a, b) = synth_ranks(
        4,
        &["-n", "120", "--inject", "nondet@50", "--fault-rank", "2"],
    );
    let o = tritontui(&[
        "diff",
        "--json",
        &a.display().to_string(),
        &b.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(report["earliest_cause"]["rank"], 2);
    assert_eq!(
        report["earliest_cause"]["divergence"]["kind"],
        "nondeterministic-kernel"
    );
    for rank in [0, 1, 3] {
        let first = &report["ranks"][rank]["report"]["first_divergence"];
        assert_eq!(first["kind"], "collective", "rank {rank}: {first}");
        assert_eq!(first["kernel"], "c10d::allreduce_");
    }
    // Its ranks still agree with each other: the fault went through the
    // collectives.
    let o = tritontui(&["ranks", &b.display().to_string()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn ranks_finds_the_collective_whose_results_differ_across_ranks() {
    let (_dir, a, b) = synth_ranks(
        5,
        &[
            "-n",
            "120",
            "--fault-rank",
            "3",
            "--corrupt-collective",
            "4",
        ],
    );
    let o = tritontui(&["ranks", &a.display().to_string()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("the ranks agree"), "{}", stdout(&o));
    // The layout: each group with its backend, members and collectives.
    assert!(
        stdout(&o).contains("process group 0 (nccl): ranks 0-4, 10 collectives"),
        "{}",
        stdout(&o)
    );
    let o = tritontui(&["ranks", "--json", &b.display().to_string()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let check: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let found = &check["first_result_mismatch"];
    assert_eq!(found["op"], "c10d::allreduce_");
    assert_eq!(
        (found["group"].as_str(), found["index"].as_u64()),
        (Some("0"), Some(4))
    );
    let values: Vec<&str> = (0..5)
        .map(|r| found["ranks"][r]["value"].as_str().unwrap_or(""))
        .collect();
    assert!(
        values
            .iter()
            .enumerate()
            .all(|(r, v)| (*v == values[0]) == (r != 3)),
        "{values:?}"
    );
    assert!(check["first_sequence_mismatch"].is_null());
    let text = stdout(&tritontui(&["ranks", &b.display().to_string()]));
    assert!(text.contains("on ranks 0-2,4 (launch #64)"), "{text}");
    // Compared run against run, no rank's divergence starts on that rank.
    let o = tritontui(&["diff", &a.display().to_string(), &b.display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("`tritontui ranks`"), "{}", stdout(&o));
}

#[test]
fn ranks_of_a_trace_file_is_a_one_line_error() {
    let o = tritontui(&["ranks", &fixture("run0.msgpack")]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not a folder of rank traces"), "{err}");
}

#[test]
fn record_keeps_the_user_s_pause_points_and_check_drops_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seen = dir.path().join("seen");
    let script = format!("echo \"[$TRITONTUI_BREAK]\" >> {}", seen.display());
    let trace = dir.path().join("t.msgpack");
    let o = Command::new(env!("CARGO_BIN_EXE_tritontui"))
        .args([
            "record",
            "-o",
            trace.to_str().expect("utf8"),
            "--",
            "sh",
            "-c",
        ])
        .arg(&script)
        .env("TRITONTUI_BREAK", "5")
        .output()
        .expect("run tritontui");
    // (The program records nothing, which record says.)
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("recorded nothing there"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&seen).expect("ran"), "[5]\n");
    std::fs::remove_file(&seen).expect("remove");
    // check runs the program unattended: its runs never pause. (The
    // program records nothing, so check fails after the first run,
    // saying so.)
    let o = Command::new(env!("CARGO_BIN_EXE_tritontui"))
        .args(["check", "-n", "2", "--dir"])
        .arg(dir.path().join("runs"))
        .args(["--", "sh", "-c"])
        .arg(&script)
        .env("TRITONTUI_BREAK", "5")
        .output()
        .expect("run tritontui");
    assert_eq!(
        std::fs::read_to_string(&seen).expect("ran"),
        "[]\n",
        "{}",
        stderr(&o)
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("recorded nothing into"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn repro_refuses_a_launch_of_a_cpp_wrapper_graph_naming_why() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/corpus/cpp_wrapper_index_add/a.msgpack")
        .display()
        .to_string();
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("repro").display().to_string();
    let o = tritontui(&["repro", &trace, "--launch", "0", "-o", &out]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains("launch 0 ran from a C++ wrapper"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// Two runs recorded as fingerprints: `diff` says the step where they part
/// and how to find the kernel, names no root cause, and exits 1; a run
/// against itself agrees.
#[test]
fn fingerprints_parting_in_the_first_step_say_which_agree_before() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/fingerprint_ranks");
    let (a, b) = (corpus.join("a.msgpack"), corpus.join("b.msgpack"));
    let text = tritontui(&["diff", a.to_str().expect("path"), b.to_str().expect("path")]);
    assert_eq!(text.status.code(), Some(1), "{}", stderr(&text));
    let said = stdout(&text);
    assert!(
        said.contains(
            "fingerprints first differ at step 0 (collective c10d::allreduce_, fingerprint 5 of \
             the step, A#4); the 4 before it agree"
        ),
        "{said}"
    );
}

#[test]
fn fingerprints_name_the_step_where_two_runs_part() {
    let corpus =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/long_run_fingerprints");
    let (a, b) = (corpus.join("a.msgpack"), corpus.join("b.msgpack"));
    let (a, b) = (a.to_str().expect("path"), b.to_str().expect("path"));
    let text = tritontui(&["diff", a, b]);
    assert_eq!(text.status.code(), Some(1), "{}", stderr(&text));
    let said = stdout(&text);
    assert!(
        said.contains("fingerprints first differ at step 400 (graph call")
            && said.contains("steps before 400 agree")
            && said.contains("TRITONTUI_FROM_STEP=399 TRITONTUI_TO_STEP=400")
            && !said.contains("root cause"),
        "{said}"
    );
    let json = tritontui(&["diff", "--json", a, b]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("json");
    let first = &report["fingerprints"]["first_difference"];
    assert_eq!(first["step"], 400, "{report}");
    assert_eq!(first["parted"], "values");
    assert!(report["root_causes"].as_array().is_some_and(Vec::is_empty));
    let same = tritontui(&["diff", a, a]);
    assert_eq!(same.status.code(), Some(0), "{}", stdout(&same));
    assert!(
        stdout(&same).contains("identical: every one of the"),
        "{}",
        stdout(&same)
    );
}

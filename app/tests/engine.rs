//! The engine against synthetic runs whose divergences are known.

use proptest::prelude::*;
use std::path::Path;
use tritontui::Report;
use tritontui::output::report::Reach;
use tritontui_engine::analysis::{Impact, RowStatus, Verdict};
use tritontui_engine::producer::Origin;
use tritontui_engine::{Analysis, Kind, Options};
use tritontui_synth::hand::{self, hashed, hashed_header};
use tritontui_synth::{Expected, Injection, Spec, generate};
use tritontui_trace::Trace;

struct Pair {
    a: Trace,
    b: Trace,
    expected: Vec<Expected>,
}

fn pair(launches: usize, injections: &[Injection]) -> Pair {
    pair_with(Spec {
        launches,
        injections: injections.to_vec(),
        autotune: false,
    })
}

fn pair_with(spec: Spec) -> Pair {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let expected = generate(&spec, &mut a, &mut b).expect("generate");
    Pair {
        a: Trace::from_bytes(Path::new("a.msgpack"), &a).expect("load a"),
        b: Trace::from_bytes(Path::new("b.msgpack"), &b).expect("load b"),
        expected,
    }
}

fn analyse(p: &Pair) -> (Analysis, Report) {
    let analysis = Analysis::run(&p.a, &p.b, Options::default());
    let report = Report::new(&p.a, &p.b, &analysis, usize::MAX);
    (analysis, report)
}

#[test]
fn identical_runs_are_identical_even_when_autotuning_differs() {
    let p = pair_with(Spec {
        launches: 500,
        injections: vec![],
        autotune: true,
    });
    // The autotuning launches really do differ between the runs.
    assert!(p.a.launches.iter().any(|l| l.autotune));
    let (analysis, report) = analyse(&p);
    assert_eq!(report.verdict.as_str(), "identical");
    assert_eq!(analysis.alignment.matched, 500);
    assert_eq!((report.launches.a, report.launches.b), (500, 500));
    assert!(report.first_divergence.is_none() && report.root_causes.is_empty());
    assert!(analysis.statuses.iter().all(|s| *s == RowStatus::Equal));
}

/// Each fault alone is the first divergence and the only root cause; every
/// later divergence leads back to it.
fn check_single(injection: Injection) {
    let p = pair(240, &[injection]);
    assert_eq!(
        p.expected.len(),
        1,
        "one expectation for {injection:?}: {:?}",
        p.expected
    );
    let expected = &p.expected[0];
    let (analysis, report) = analyse(&p);
    let first = report.first_divergence.as_ref().expect("a divergence");
    assert_eq!(first.kind, expected.kind, "{injection:?}: {}", first.detail);
    assert_eq!(
        (first.a_index, first.b_index),
        (expected.a_seq, expected.b_seq),
        "{injection:?}"
    );
    assert_eq!(first.kernel, expected.kernel);
    assert!(first.root_cause, "{injection:?}");
    assert_eq!(
        report.root_causes.len(),
        1,
        "{injection:?}: {:#?}",
        report.root_causes
    );
    for (i, d) in analysis.divergences.iter().enumerate().skip(1) {
        assert!(
            !d.is_root_cause(),
            "{injection:?}: divergence {i} is a second root cause"
        );
        assert_eq!(d.root, 0, "divergence {i} leads back to the injected fault");
    }
}

#[test]
fn a_nondeterministic_kernel_is_the_root_cause_and_its_consumers_propagate() {
    check_single(Injection::Nondeterministic { at: 29 });
    let p = pair(240, &[Injection::Nondeterministic { at: 29 }]);
    let (analysis, report) = analyse(&p);
    let first = report.first_divergence.expect("divergent");
    assert_eq!(first.args, ["out_ptr0", "in_out_ptr0"]);
    // Kernel 5 of the simulated step is the index_add with tl.atomic_add.
    // Without a rerun of the kernel alone, the words conclude nothing.
    assert!(
        first.detail.contains("unconfirmed") && first.detail.contains("atomic"),
        "{}",
        first.detail
    );
    let consumer = &analysis.divergences[1];
    assert_eq!(consumer.kind, Kind::DivergentInput);
    assert_eq!(consumer.reached_from.map(|(d, _)| d), Some(0));
    assert!(matches!(consumer.origins[0].a, Origin::Launch(..)));
}

#[test]
fn only_a_kernel_that_uses_atomics_is_said_to() {
    // Kernel 6 of the simulated step is a reduction without atomics; its
    // source still names `'atomic_add_found': False` in its decorator.
    let (_, report) = analyse(&pair(240, &[Injection::Nondeterministic { at: 30 }]));
    let first = report.first_divergence.expect("divergent");
    assert_eq!(first.kernel, "triton_red_fused_sum_6");
    assert!(
        first.detail.contains("unconfirmed") && !first.detail.contains("atomic"),
        "{}",
        first.detail
    );
}

#[test]
fn a_different_config_is_a_launch_config_divergence() {
    check_single(Injection::LaunchConfig { at: 50 });
    let (_, report) = analyse(&pair(240, &[Injection::LaunchConfig { at: 50 }]));
    let detail = &report.first_divergence.expect("divergent").detail;
    assert!(detail.contains("num_warps 4 vs 8"), "{detail}");
}

#[test]
fn different_source_is_a_code_divergence() {
    check_single(Injection::Code { at: 77 });
}

#[test]
fn a_different_output_shape_is_structural() {
    check_single(Injection::Shape { at: 100 });
    let (_, report) = analyse(&pair(240, &[Injection::Shape { at: 100 }]));
    let first = report.first_divergence.expect("divergent");
    assert_eq!(first.args, ["out_ptr0"]);
    assert!(
        first.detail.contains("[8, 512, 2048] in B"),
        "{}",
        first.detail
    );
}

#[test]
fn an_unrecorded_write_is_a_divergent_input_whose_producer_agreed() {
    check_single(Injection::Input { at: 61 });
    let (_, report) = analyse(&pair(240, &[Injection::Input { at: 61 }]));
    let first = report.first_divergence.expect("divergent");
    let producer = first.producer.expect("the last recorded writer is named");
    assert_eq!((producer.a_index, producer.b_index), (Some(60), Some(60)));
    assert_eq!(producer.arg, "out_ptr0");
    assert!(
        first.detail.contains("outside the recorded region"),
        "{}",
        first.detail
    );
}

#[test]
fn a_changed_weight_names_the_graph_input_once() {
    check_single(Injection::Weight { kernel: 3 });
    let (analysis, report) = analyse(&pair(240, &[Injection::Weight { kernel: 3 }]));
    let first = report.first_divergence.expect("divergent");
    assert_eq!(first.args, ["in_ptr2"]);
    assert!(first.producer.is_none());
    assert!(
        first.detail.contains("graph input primals_5"),
        "{}",
        first.detail
    );
    // The weight is read again every step; those reads lead back to the first.
    let rereads: Vec<_> = analysis
        .divergences
        .iter()
        .filter(|d| d.origins.iter().any(|o| o.same_outside_value))
        .collect();
    assert!(rereads.len() >= 19, "{} re-reads", rereads.len());
}

#[test]
fn reading_memory_nobody_wrote_has_no_producer() {
    check_single(Injection::Uninitialized { at: 130 });
    let (_, report) = analyse(&pair(240, &[Injection::Uninitialized { at: 130 }]));
    let first = report.first_divergence.expect("divergent");
    assert_eq!(first.args, ["in_ptr3"]);
    assert!(first.producer.is_none());
    assert!(
        first
            .detail
            .contains("no recorded launch wrote these bytes"),
        "{}",
        first.detail
    );
}

#[test]
fn inserted_launches_are_structural_and_misalign_nothing_else() {
    check_single(Injection::Insert { at: 90, count: 4 });
    let (analysis, report) = analyse(&pair(240, &[Injection::Insert { at: 90, count: 4 }]));
    assert_eq!(report.divergence_count, 1);
    assert_eq!(analysis.alignment.matched, 240);
    let first = report.first_divergence.expect("divergent");
    assert_eq!((first.only_in_a, first.only_in_b), (0, 4));
    assert_eq!(first.a_index, None);
}

#[test]
fn independent_faults_are_separate_root_causes() {
    let p = pair(
        400,
        &[
            Injection::Insert { at: 10, count: 2 },
            Injection::Uninitialized { at: 200 },
        ],
    );
    let (analysis, report) = analyse(&p);
    let roots: Vec<_> = report
        .root_causes
        .iter()
        .map(|d| (d.kind, d.a_index, d.b_index))
        .collect();
    assert_eq!(
        roots,
        [
            (Kind::Structural, None, Some(10)),
            (Kind::DivergentInput, Some(200), Some(202)),
        ]
    );
    // Everything after launch 200 propagates from it.
    assert!(analysis.divergences.len() > 150);
    assert!(analysis.divergences[2..].iter().all(|d| !d.is_root_cause()));
}

#[test]
fn a_trace_cut_short_compares_the_launches_it_has() {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let spec = Spec {
        launches: 100,
        injections: vec![],
        autotune: false,
    };
    generate(&spec, &mut a, &mut b).expect("generate");
    let cut = b.len() * 2 / 3;
    let ta = Trace::from_bytes(Path::new("a"), &a).expect("a");
    let tb = Trace::from_bytes(Path::new("b"), &b[..cut]).expect("b loads");
    assert!(tb.early_end.is_some());
    let analysis = Analysis::run(&ta, &tb, Options::default());
    let report = Report::new(&ta, &tb, &analysis, 10);
    assert_eq!(report.launches.b, tb.launches.len());
    assert!(!report.runs.b.complete);
    // The launches B lacks are its only difference.
    let first = report.first_divergence.expect("divergent");
    assert_eq!(first.kind, Kind::Structural);
    assert_eq!(first.only_in_a, 100 - tb.launches.len());
    assert!(
        first
            .detail
            .contains(": run B ended early (truncated at byte"),
        "{}",
        first.detail
    );
}

#[test]
fn kernels_a_run_cut_short_never_got_to_are_not_another_program_s() {
    let trace = |kernels: &[&str], cut: bool| {
        let mut w =
            tritontui_trace::TraceWriter::new(Vec::new(), &hashed_header()).expect("header");
        for (seq, name) in kernels.iter().enumerate() {
            write_launch(&mut w, seq as u64, name, &[], Vec::new());
        }
        let mut bytes = w.finish(kernels.len() as u64, "exit").expect("finish");
        if cut {
            bytes.truncate(bytes.len() - 2); // into the end record
        }
        Trace::from_bytes(Path::new("t"), &bytes).expect("load")
    };
    let whole = trace(&["k1", "k2", "k3"], false);
    let cut = trace(&["k1", "k2"], true);
    assert!(cut.early_end.is_some());
    let programs = tritontui_engine::programs::ProgramDifferences::of(&whole, &cut);
    assert!(!programs.any(), "{programs:?}");
    // The same launches in a trace that ended cleanly: a kernel only A ran.
    let ended = trace(&["k1", "k2"], false);
    let programs = tritontui_engine::programs::ProgramDifferences::of(&whole, &ended);
    assert_eq!(programs.kernels_only.a, ["k3"]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_single_fault_is_found_where_it_was_put(
        launches in 30usize..200,
        position in 0.0f64..1.0,
        kind in 0usize..7,
    ) {
        let at = ((launches as f64) * position) as usize;
        let injection = match kind {
            0 => Injection::Nondeterministic { at },
            1 => Injection::LaunchConfig { at },
            2 => Injection::Code { at },
            3 => Injection::Input { at },
            4 => Injection::Uninitialized { at },
            5 => Injection::Insert { at, count: 1 + at % 3 },
            _ => Injection::Shape { at },
        };
        let p = pair(launches, &[injection]);
        let (_, report) = analyse(&p);
        let expected = &p.expected[0];
        let first = report.first_divergence.expect("divergent");
        prop_assert_eq!(first.kind, expected.kind);
        prop_assert_eq!((first.a_index, first.b_index), (expected.a_seq, expected.b_seq));
        prop_assert_eq!(report.root_causes.len(), 1);
    }
}

/// A pair of one-launch traces of a kernel with one `inout` argument.
/// One tensor argument of a hand-built launch: name, access, address,
/// hash before and hash after.
type HandArg = (&'static str, tritontui_trace::Access, u64, u64, u64);

/// Writes a kernel and one launch of it (see `tritontui_synth::hand`).
fn write_launch(
    w: &mut tritontui_trace::TraceWriter<Vec<u8>>,
    seq: u64,
    name: &str,
    defs: &[(&str, tritontui_trace::Access)],
    args: Vec<tritontui_trace::ArgValue>,
) {
    hand::write_launch(w, seq, name, defs, args).expect("launch");
}

/// A trace of C++ launches, one kernel each, built by hand.
fn hand_trace(launches: &[(&str, Vec<HandArg>)]) -> Trace {
    hand_trace_with_results(launches, None)
}

/// Like [`hand_trace`], ending with a `results` record of the tensors at
/// `results` (addresses, the same layout) when given.
fn hand_trace_with_results(launches: &[(&str, Vec<HandArg>)], results: Option<&[u64]>) -> Trace {
    hand_trace_returning_unwritten(launches, results, &[])
}

/// Like [`hand_trace_with_results`], the outputs named in `unwritten`
/// recorded as the recorder records an output an operation returns
/// without writing it: flagged allocated, not hashed.
fn hand_trace_returning_unwritten(
    launches: &[(&str, Vec<HandArg>)],
    results: Option<&[u64]>,
    unwritten: &[&str],
) -> Trace {
    use tritontui_trace::{Record, ResultsRecord, TensorArg, TraceWriter};
    let mut w = TraceWriter::new(Vec::new(), &hashed_header()).expect("header");
    let layout = w
        .layout("float32", 4, &[128, 1], &[1, 1], 0)
        .expect("layout");
    for (seq, (name, args)) in launches.iter().enumerate() {
        let defs: Vec<_> = args
            .iter()
            .map(|&(name, access, ..)| (name, access))
            .collect();
        // The recorder flags what the kernel writes, as declared.
        let values = args
            .iter()
            .map(|&(name, access, ptr, pre, post)| {
                let mut value = hashed(layout, ptr, pre, post);
                if let tritontui_trace::ArgValue::Tensor(t) = &mut value {
                    if !access.writes() {
                        t.flags = 0;
                    } else if unwritten.contains(&name) {
                        t.flags = TensorArg::WRITTEN | TensorArg::ALLOCATED;
                        (t.pre, t.post) = (None, None);
                    }
                }
                value
            })
            .collect();
        write_launch(&mut w, seq as u64, name, &defs, values);
    }
    if let Some(results) = results {
        let args = results
            .iter()
            .map(|&ptr| hashed(layout, ptr, 0, 0))
            .collect();
        let record = Record::Results(ResultsRecord {
            before: launches.len() as u64,
            device: -1,
            args,
            names: Vec::new(),
        });
        w.write(&record).expect("results");
    }
    let bytes = w.finish(launches.len() as u64, "exit").expect("finish");
    Trace::from_bytes(Path::new("t"), &bytes).expect("load")
}

fn root_causes(analysis: &Analysis) -> Vec<&tritontui_engine::analysis::Divergence> {
    analysis
        .divergences
        .iter()
        .filter(|d| d.is_root_cause())
        .collect()
}

fn inout_pair(pre: (u64, u64), post: (u64, u64)) -> (Trace, Trace) {
    use tritontui_trace::Access::Inout;
    let one = |pre, post| {
        hand_trace(&[(
            "cpp_fused_native_layer_norm_0",
            vec![("in_out_ptr0", Inout, 4096, pre, post)],
        )])
    };
    (one(pre.0, post.0), one(pre.1, post.1))
}

/// A producer writes X; a consumer reads X and has an in/out scratch
/// buffer no recorded launch wrote, whose old bytes differ (`stale`).
fn scratch_pair(x: (u64, u64)) -> (Trace, Trace) {
    use tritontui_trace::Access::{In, Inout, Out};
    let one = |x, stale, after| {
        hand_trace(&[
            ("producer", vec![("out_ptr0", Out, 4096, 0, x)]),
            (
                "consumer",
                vec![
                    ("in_ptr0", In, 4096, x, x),
                    ("in_out_ptr0", Inout, 8192, stale, after),
                ],
            ),
        ])
    };
    (one(x.0, 7, 70), one(x.1, 8, 80))
}

#[test]
fn stale_scratch_does_not_make_a_second_root_cause() {
    let (a, b) = scratch_pair((1, 2));
    let analysis = Analysis::run(&a, &b, Options::default());
    let roots = root_causes(&analysis);
    assert_eq!(roots.len(), 1, "{:?}", analysis.divergences);
    assert_eq!(roots[0].a, Some(0));
    let consumer = &analysis.divergences[1];
    assert_eq!(consumer.reached_from, Some((0, 0)));
    assert_eq!(consumer.primary_origin().map(|o| o.arg), Some(0));
}

#[test]
fn stale_scratch_alone_still_makes_a_root_cause() {
    let (a, b) = scratch_pair((1, 1));
    let analysis = Analysis::run(&a, &b, Options::default());
    let roots = root_causes(&analysis);
    assert_eq!(roots.len(), 1, "{:?}", analysis.divergences);
    assert_eq!(roots[0].kind, Kind::DivergentInput);
}

/// A trace of three launches over one buffer at 4096: `wide` writes all
/// 512 bytes (hash `wide`), `narrow` then writes its first 4 bytes the
/// same in both runs, and `reader` reads the 512 bytes (hash `read`
/// before) and writes elsewhere (hash `out`).
fn reused_buffer_trace(wide: u64, read: u64, out: u64) -> Trace {
    use tritontui_trace::Access::{In, Out};
    use tritontui_trace::{ArgValue, TraceWriter};
    let mut w = TraceWriter::new(Vec::new(), &hashed_header()).expect("header");
    let whole = w.layout("float32", 4, &[128], &[1], 0).expect("layout");
    let first = w.layout("float32", 4, &[1], &[1], 0).expect("layout");
    let written = tritontui_trace::TensorArg::WRITTEN;
    let out_arg = |layout, ptr, post| ArgValue::tensor(layout, ptr, written, None, Some(post));
    let read_only = ArgValue::tensor(whole, 4096, 0, Some(read), Some(read));
    write_launch(
        &mut w,
        0,
        "wide",
        &[("out_ptr0", Out)],
        vec![out_arg(whole, 4096, wide)],
    );
    write_launch(
        &mut w,
        1,
        "narrow",
        &[("out_ptr0", Out)],
        vec![out_arg(first, 4096, 5)],
    );
    write_launch(
        &mut w,
        2,
        "reader",
        &[("in_ptr0", In), ("out_ptr0", Out)],
        vec![read_only, out_arg(whole, 8192, out)],
    );
    let bytes = w.finish(3, "exit").expect("finish");
    Trace::from_bytes(Path::new("t"), &bytes).expect("load")
}

/// Two reused-buffer traces whose wide writes hash `wide` (A, B), and
/// whose reader reads other bytes in each run.
fn reused_buffer_analysis(wide: (u64, u64)) -> Analysis {
    let a = reused_buffer_trace(wide.0, 10, 20);
    let b = reused_buffer_trace(wide.1, 11, 21);
    Analysis::run(&a, &b, Options::default())
}

#[test]
fn an_input_is_explained_by_an_earlier_writer_whose_bytes_it_still_holds() {
    // The CUDA graph case: a 4-byte static input copied over the start of
    // a buffer the previous replay wrote differently in each run; a kernel
    // then reads the whole buffer. The copy, its last writer, agrees.
    let analysis = reused_buffer_analysis((1, 2));
    let roots: Vec<_> = root_causes(&analysis).iter().map(|d| d.a).collect();
    assert_eq!(
        roots,
        [Some(0)],
        "the wide write: {:?}",
        analysis.divergences
    );
    let reader = analysis
        .divergences
        .iter()
        .find(|d| d.a == Some(2))
        .expect("the reader diverges");
    assert_eq!(reader.kind, Kind::DivergentInput);
    let origin = reader.primary_origin().expect("an origin");
    assert!(matches!(origin.a, Origin::Launch(0, 0)), "{origin:?}");
    // Equal wide writes: the reader's differing input is the root cause,
    // changed outside the recorded region after the copy.
    let analysis = reused_buffer_analysis((1, 1));
    let roots: Vec<_> = root_causes(&analysis).iter().map(|d| d.a).collect();
    assert_eq!(roots, [Some(2)], "the reader: {:?}", analysis.divergences);
}

#[test]
fn old_bytes_a_kernel_overwrote_do_not_make_a_divergence() {
    // Uninitialized scratch: different before, the same after.
    let (a, b) = inout_pair((1, 2), (7, 7));
    let analysis = Analysis::run(&a, &b, Options::default());
    assert!(analysis.divergences.is_empty());
    assert_eq!(analysis.statuses, [RowStatus::Benign]);
    // Different before and after: it was read, so it is a divergent input.
    let (a, b) = inout_pair((1, 2), (7, 8));
    let analysis = Analysis::run(&a, &b, Options::default());
    assert_eq!(analysis.divergences[0].kind, Kind::DivergentInput);
}

/// A weight `init` writes whole (hash 1), which run B's `poke` changes one
/// element of when `poke` is set; then a graph is called with the weight
/// (hash `entered` in run B, 1 in run A) and `reader` reads it.
fn weight_pair(poke: bool, entered: u64) -> (Trace, Trace) {
    use tritontui_trace::Access::{In, Inout, Out};
    use tritontui_trace::{CallRecord, GraphDef, Record, TraceWriter};
    const WEIGHT: u64 = 4096;
    let one = |poke: bool, entered: u64| {
        let mut w = TraceWriter::new(Vec::new(), &hashed_header()).expect("header");
        let whole = w.layout("float32", 4, &[128], &[1], 0).expect("layout");
        let element = w.layout("float32", 4, &[], &[], 0).expect("layout");
        let reader = 1 + u64::from(poke);
        let init = vec![hashed(whole, WEIGHT, 0, 1)];
        write_launch(&mut w, 0, "init", &[("self", Out)], init);
        if poke {
            let element = vec![hashed(element, WEIGHT + 8, 5, 6)];
            write_launch(&mut w, 1, "poke", &[("self", Inout)], element);
        }
        w.write(&Record::Graph(GraphDef {
            id: 0,
            key: "g".into(),
            inputs: vec!["primals_1".into()],
        }))
        .expect("graph");
        w.write(&Record::Call(CallRecord {
            graph: 0,
            before: reader,
            device: -1,
            first: 0,
            args: vec![hashed(whole, WEIGHT, entered, entered)],
        }))
        .expect("call");
        let read = vec![hashed(whole, WEIGHT, entered, entered)];
        write_launch(&mut w, reader, "reader", &[("self", In)], read);
        let bytes = w.finish(reader + 1, "exit").expect("finish");
        Trace::from_bytes(Path::new("t"), &bytes).expect("load")
    };
    (one(false, 1), one(poke, entered))
}

#[test]
fn a_weight_changed_in_place_by_a_recorded_launch_leads_back_to_it() {
    let (a, b) = weight_pair(true, 2);
    let analysis = Analysis::run(&a, &b, Options::default());
    let roots = root_causes(&analysis);
    assert_eq!(roots.len(), 1, "{:?}", analysis.divergences);
    assert_eq!((roots[0].kind, roots[0].b), (Kind::Structural, Some(1)));
    let reader = analysis
        .divergences
        .iter()
        .find(|d| d.kind == Kind::DivergentInput)
        .expect("the reader diverges");
    let origin = reader.primary_origin().expect("its input's origin");
    assert_eq!(
        (origin.a, origin.b),
        (Origin::Launch(0, 0), Origin::Launch(1, 0))
    );
}

#[test]
fn a_weight_changed_outside_is_named_by_its_graph_input() {
    let (a, b) = weight_pair(false, 2);
    let analysis = Analysis::run(&a, &b, Options::default());
    let reader = &analysis.divergences[0];
    assert!(reader.is_root_cause(), "{:?}", analysis.divergences);
    let origin = reader.primary_origin().expect("its input's origin");
    assert_eq!(
        (origin.a, origin.b),
        (Origin::Launch(0, 0), Origin::GraphInput(0))
    );
}

/// A nondeterministic producer writes X (at 4096); a consumer reads X and
/// writes Y (at 8192) with equal bits in both runs. The results are the
/// tensors at `results`, or unrecorded.
fn absorbed_pair(results: Option<&[u64]>) -> (Trace, Trace) {
    use tritontui_trace::Access::{In, Out};
    let one = |x| {
        hand_trace_with_results(
            &[
                ("cpp_fused_index_add_0", vec![("out_ptr0", Out, 4096, 0, x)]),
                (
                    "cpp_fused_gt_1",
                    vec![("in_ptr0", In, 4096, x, x), ("out_ptr0", Out, 8192, 0, 5)],
                ),
            ],
            results,
        )
    };
    (one(1), one(2))
}

#[test]
fn a_difference_absorbed_before_the_results_is_benign() {
    let (a, b) = absorbed_pair(Some(&[8192]));
    let analysis = Analysis::run(&a, &b, Options::default());
    assert_eq!(analysis.verdict, Verdict::Benign);
    let roots = root_causes(&analysis);
    assert_eq!(roots.len(), 1, "{:?}", analysis.divergences);
    assert_eq!(roots[0].impact, Impact::Absorbed(vec![1]));
    let consumer = &analysis.divergences[1];
    assert!(
        consumer.absorbed && !consumer.is_root_cause(),
        "{consumer:?}"
    );
    assert_eq!(analysis.first().and_then(|d| d.a), Some(0));
    let report = Report::new(&a, &b, &analysis, usize::MAX);
    assert_eq!(report.verdict.as_str(), "benign");
    assert_eq!(report.absorbed_count, 1);
    assert_eq!(report.root_causes[0].impact, Reach::Absorbed);
    assert_eq!(
        report.root_causes[0].absorbed_by[0].kernel,
        "cpp_fused_gt_1"
    );
}

#[test]
fn a_difference_that_stays_in_the_results_is_divergent() {
    // The differing bytes are themselves part of the results.
    let (a, b) = absorbed_pair(Some(&[4096, 8192]));
    let analysis = Analysis::run(&a, &b, Options::default());
    assert_eq!(analysis.verdict, Verdict::Divergent);
    assert!(root_causes(&analysis)[0].impact.reaches());
    // Without a results record every last write counts as a result.
    let (a, b) = absorbed_pair(None);
    let analysis = Analysis::run(&a, &b, Options::default());
    assert_eq!(analysis.verdict, Verdict::Divergent);
    let report = Report::new(&a, &b, &analysis, usize::MAX);
    assert!(!report.results_recorded.a && !report.results_recorded.b);
}

#[test]
fn a_launch_whose_outputs_agree_is_never_a_root_cause() {
    use tritontui_trace::Access::{In, Out};
    // Its input differs and nothing recorded wrote it (a host-side change),
    // but everything it wrote agrees.
    let one = |op: &str, x| {
        hand_trace_with_results(
            &[(
                op,
                vec![("self", In, 4096, x, x), ("result", Out, 8192, 0, 5)],
            )],
            Some(&[8192]),
        )
    };
    let analysis = Analysis::run(&one("aten::gt", 1), &one("aten::gt", 2), Options::default());
    assert!(
        root_causes(&analysis).is_empty(),
        "{:?}",
        analysis.divergences
    );
    assert_eq!(analysis.verdict, Verdict::Benign);
    assert!(
        analysis.first().is_some_and(|d| d.absorbed),
        "it is still shown"
    );
    // An op that reads only its input's shape never reads its values: a
    // differing input is no divergence of it, absorbed or not.
    let like = |x| one("aten::zeros_like", x);
    let analysis = Analysis::run(&like(1), &like(2), Options::default());
    assert!(
        analysis.divergences.is_empty(),
        "{:?}",
        analysis.divergences
    );
    assert_eq!(analysis.verdict, Verdict::Identical);
}

/// An attention op returns `philox_seed` without writing it (the bytes
/// there differ between the runs: `seed`); its backward reads them and
/// writes gradients that agree.
fn unwritten_output_pair(seed: (u64, u64)) -> (Trace, Trace) {
    use tritontui_trace::Access::{In, Out};
    let one = |seed| {
        hand_trace_returning_unwritten(
            &[
                (
                    "aten::_scaled_dot_product_efficient_attention",
                    vec![
                        ("query", In, 4096, 1, 1),
                        ("output", Out, 8192, 0, 5),
                        ("philox_seed", Out, 12288, 0, 0),
                    ],
                ),
                (
                    "aten::_scaled_dot_product_efficient_attention_backward",
                    vec![
                        ("philox_seed", In, 12288, seed, seed),
                        ("grad_query", Out, 16384, 0, 6),
                    ],
                ),
            ],
            Some(&[8192, 16384]),
            &["philox_seed"],
        )
    };
    (one(seed.0), one(seed.1))
}

#[test]
fn an_output_returned_unwritten_is_uninitialized_memory_not_a_nondeterministic_kernel() {
    let (a, b) = unwritten_output_pair((7, 8));
    let analysis = Analysis::run(&a, &b, Options::default());
    assert_eq!(analysis.verdict, Verdict::Benign);
    assert_eq!(analysis.divergences.len(), 1, "{:?}", analysis.divergences);
    let reader = &analysis.divergences[0];
    assert_eq!(reader.a, Some(1), "the reader, not the op that returned it");
    assert_eq!(
        reader.kind,
        tritontui_engine::analysis::Kind::DivergentInput
    );
    assert!(reader.absorbed, "its gradients agree");
    let report = Report::new(&a, &b, &analysis, usize::MAX);
    let first = report
        .first_divergence
        .expect("the absorbed reader is shown");
    let origin = first.origin.unwrap_or_default();
    assert!(
        origin.contains("uninitialized output, never written")
            && origin.contains("returns philox_seed without writing it"),
        "{origin}"
    );
    // Nobody reading them, uninitialized bytes make no divergence at all.
    let (a, b) = unwritten_output_pair((7, 7));
    let analysis = Analysis::run(&a, &b, Options::default());
    assert_eq!(analysis.verdict, Verdict::Identical);
}

#[test]
fn state_returned_unwritten_does_not_make_its_reader_a_second_root_cause() {
    use tritontui_trace::Access::{In, Out};
    // A nondeterministic kernel writes X; the attention backward reads X
    // and the unwritten philox_seed, both differing, and its gradient
    // differs: X explains it.
    let one = |x, seed, grad| {
        hand_trace_returning_unwritten(
            &[
                (
                    "triton_poi_fused_index_add_0",
                    vec![("out_ptr0", Out, 20480, 0, x)],
                ),
                (
                    "aten::_scaled_dot_product_efficient_attention",
                    vec![("query", In, 4096, 1, 1), ("philox_seed", Out, 12288, 0, 0)],
                ),
                (
                    "aten::_scaled_dot_product_efficient_attention_backward",
                    vec![
                        ("grad_out", In, 20480, x, x),
                        ("philox_seed", In, 12288, seed, seed),
                        ("grad_query", Out, 16384, 0, grad),
                    ],
                ),
            ],
            Some(&[16384]),
            &["philox_seed"],
        )
    };
    let (a, b) = (one(1, 7, 5), one(2, 8, 6));
    let analysis = Analysis::run(&a, &b, Options::default());
    let roots = root_causes(&analysis);
    assert_eq!(roots.len(), 1, "{:?}", analysis.divergences);
    assert_eq!(roots[0].a, Some(0));
    let reader = analysis.divergences.iter().find(|d| d.a == Some(2));
    assert_eq!(reader.and_then(|d| d.reached_from), Some((0, 0)));
}

/// A trace whose one launch writes the same bits (5) at 4096 in both runs,
/// ending with a result at `result_at` hashed `result`, after `extra`
/// records; `reason` is its end record's, `kernels` its recorded glob.
fn unseen_trace(
    result_at: u64,
    result: u64,
    extra: &[tritontui_trace::Record],
    reason: &str,
    kernels: &str,
) -> Trace {
    use tritontui_trace::Access::Out;
    use tritontui_trace::{ArgValue, Record, ResultsRecord, TraceWriter};
    let mut header = hashed_header();
    header.options.kernels = kernels.into();
    let mut w = TraceWriter::new(Vec::new(), &header).expect("header");
    let layout = w
        .layout("float32", 4, &[128, 1], &[1, 1], 0)
        .expect("layout");
    let written = hashed(layout, 4096, 0, 5);
    write_launch(
        &mut w,
        0,
        "cpp_fused_fill_0",
        &[("out_ptr0", Out)],
        vec![written],
    );
    for record in extra {
        w.write(record).expect("extra record");
    }
    let record = Record::Results(ResultsRecord {
        before: 1,
        device: -1,
        args: vec![ArgValue::tensor(layout, result_at, 0, Some(result), None)],
        names: Vec::new(),
    });
    w.write(&record).expect("results");
    let bytes = w.finish(1, reason).expect("finish");
    Trace::from_bytes(Path::new("t"), &bytes).expect("load")
}

/// The compile record the recorder writes for a graph compiled with
/// cpp_wrapper, whose launches it cannot see.
fn unrecorded_graph() -> tritontui_trace::Record {
    let mut info = std::collections::BTreeMap::new();
    info.insert(
        "unrecorded".to_owned(),
        tritontui_trace::Scalar::Str("cpp_wrapper".into()),
    );
    tritontui_trace::Record::Compile(tritontui_trace::format::CompileRecord {
        event: "graph".into(),
        name: "fxkey0".into(),
        pid: 1,
        ts: 0,
        dur_ns: 0,
        info,
    })
}

#[test]
fn results_that_differ_make_the_runs_divergent_whatever_the_launches_say() {
    let graph = [unrecorded_graph()];
    let (a, b) = (
        unseen_trace(8192, 1, &graph, "exit", "*"),
        unseen_trace(8192, 2, &graph, "exit", "*"),
    );
    let analysis = Analysis::run(&a, &b, Options::default());
    assert!(analysis.divergences.is_empty(), "every launch agrees");
    assert_eq!(analysis.verdict, Verdict::Divergent);
    assert_eq!(analysis.results.compared, 1);
    assert_eq!(analysis.unexplained_results().count(), 1);
    let report = Report::new(&a, &b, &analysis, usize::MAX);
    let first = report
        .first_divergence
        .clone()
        .expect("the result is the root cause");
    assert_eq!(first.kind, Kind::Result);
    assert_eq!(first.kernel, tritontui::output::report::UNRECORDED);
    assert!(
        first.detail.contains("no recorded launch wrote it")
            && first
                .detail
                .contains("graph fxkey0 (cpp_wrapper) ran without its launches recorded"),
        "{}",
        first.detail
    );
    assert_eq!(report.root_causes.len(), 1);
    assert!(tritontui::output::summary(&report).starts_with("A  t"));

    // A result a recorded launch wrote the same in both runs, changed since.
    let (a, b) = (
        unseen_trace(4096, 7, &[], "exit", "*"),
        unseen_trace(4096, 8, &[], "exit", "*"),
    );
    let analysis = Analysis::run(&a, &b, Options::default());
    assert_eq!(analysis.verdict, Verdict::Divergent);
    let report = Report::new(&a, &b, &analysis, usize::MAX);
    let first = report
        .first_divergence
        .expect("the result is the root cause");
    assert_eq!(
        (first.kind, first.kernel.as_str(), first.a_index),
        (Kind::Result, "cpp_fused_fill_0", Some(0))
    );
    assert!(
        first
            .detail
            .contains("something the trace did not record changed it since"),
        "{}",
        first.detail
    );
}

#[test]
fn a_trace_with_gaps_is_inconclusive_never_identical() {
    use tritontui_engine::gaps::GapKind;
    let verdict = |a: &Trace, b: &Trace| Analysis::run(a, b, Options::default());
    let clean = unseen_trace(8192, 1, &[], "exit", "*");
    assert_eq!(verdict(&clean, &clean).verdict, Verdict::Identical);
    let gap_record = tritontui_trace::Record::Gap(tritontui_trace::GapRecord {
        what: "results".into(),
        detail: "RuntimeError('boom')".into(),
        before: 1,
        ts: 0,
    });
    let cases = [
        (
            unseen_trace(8192, 1, &[unrecorded_graph()], "exit", "*"),
            GapKind::UnrecordedGraph,
        ),
        (
            unseen_trace(
                8192,
                1,
                &[],
                "error: RuntimeError('Already mutably borrowed')",
                "*",
            ),
            GapKind::Stopped,
        ),
        (
            unseen_trace(8192, 1, &[], "exit", "cpp_fused_*"),
            GapKind::KernelsFiltered,
        ),
        (
            unseen_trace(8192, 1, &[gap_record], "exit", "*"),
            GapKind::Recorder,
        ),
    ];
    for (gappy, kind) in cases {
        let analysis = verdict(&clean, &gappy);
        assert_eq!(analysis.verdict, Verdict::Inconclusive, "{kind:?}");
        assert!(analysis.gaps.a.is_empty());
        assert_eq!(
            analysis.gaps.b.iter().map(|g| g.kind()).collect::<Vec<_>>(),
            vec![kind]
        );
        let report = Report::new(&clean, &gappy, &analysis, usize::MAX);
        let summary = tritontui::output::summary(&report);
        assert!(
            summary.contains("not seen:") && summary.contains("inconclusive:"),
            "{summary}"
        );
        // A difference seen is still a difference.
        let differs = unseen_trace(8192, 2, &[], "exit", "*");
        assert_eq!(verdict(&differs, &gappy).verdict, Verdict::Divergent);
    }
}

#[test]
fn launches_left_unrecorded_alike_are_one_gap_with_their_count() {
    let unrecorded = |kernel: &str, before: u64| {
        tritontui_trace::Record::Gap(tritontui_trace::GapRecord {
            what: "launch".into(),
            detail: format!("{kernel} (ValueError('cannot describe'))"),
            before,
            ts: 0,
        })
    };
    let records = [
        unrecorded("aten::randn.generator", 1),
        unrecorded("aten::mm", 1),
        unrecorded("aten::randn.generator", 1),
        unrecorded("aten::randn.generator", 1),
    ];
    let gappy = unseen_trace(8192, 1, &records, "exit", "*");
    let clean = unseen_trace(8192, 1, &[], "exit", "*");
    let analysis = Analysis::run(&clean, &gappy, Options::default());
    assert_eq!(analysis.verdict, Verdict::Inconclusive);
    let said: Vec<String> = analysis.gaps.b.iter().map(tritontui::words::gap).collect();
    assert_eq!(
        said,
        [
            "not recorded: launch: aten::randn.generator (ValueError('cannot describe')) (3 times)",
            "not recorded: launch: aten::mm (ValueError('cannot describe'))",
        ]
    );
}

#[test]
fn a_result_holding_an_outside_value_is_explained_by_its_first_reader() {
    use tritontui_trace::Access::{In, Out};
    use tritontui_trace::{ArgValue, Record, ResultsRecord, TraceWriter};
    // Bytes at 4096 nobody recorded wrote differ (`x`); a launch reads them
    // and writes 8192 differently; both are results at the end.
    let one = |x: u64| {
        let mut w = TraceWriter::new(Vec::new(), &hashed_header()).expect("header");
        let layout = w
            .layout("float32", 4, &[128, 1], &[1, 1], 0)
            .expect("layout");
        let args = vec![hashed(layout, 4096, x, x), hashed(layout, 8192, 0, x + 10)];
        write_launch(
            &mut w,
            0,
            "cpp_fused_add_0",
            &[("in_ptr0", In), ("out_ptr0", Out)],
            args,
        );
        let results = [(4096, x), (8192, x + 10)]
            .map(|(ptr, hash)| ArgValue::tensor(layout, ptr, 0, Some(hash), None));
        let record = Record::Results(ResultsRecord {
            before: 1,
            device: -1,
            args: results.to_vec(),
            names: Vec::new(),
        });
        w.write(&record).expect("results");
        let bytes = w.finish(1, "exit").expect("finish");
        Trace::from_bytes(Path::new("t"), &bytes).expect("load")
    };
    let analysis = Analysis::run(&one(1), &one(2), Options::default());
    assert_eq!(analysis.verdict, Verdict::Divergent);
    assert_eq!(analysis.results.differences.len(), 2);
    // The outside bytes themselves, and what the reader wrote: one root
    // cause, the reader, not a second one for the result it read.
    assert_eq!(analysis.unexplained_results().count(), 0);
    let report = Report::new(&one(1), &one(2), &analysis, usize::MAX);
    assert_eq!(report.root_causes.len(), 1, "{:?}", report.root_causes);
    assert_eq!(report.root_causes[0].kind, Kind::DivergentInput);
}

/// Run A has a launch run B lacks, writing memory that is a result of A:
/// with `b_has_it`, B has a result there too (no launch wrote it; both
/// hold the same bits), else the result is A's alone.
fn extra_writer_pair(b_has_it: bool) -> (Trace, Trace) {
    use tritontui_trace::Access::Out;
    let a = hand_trace_with_results(
        &[
            ("producer", vec![("out_ptr0", Out, 4096, 0, 5)]),
            ("extra", vec![("out_ptr0", Out, 8192, 0, 9)]),
        ],
        Some(&[4096, 8192]),
    );
    let b_results: &[u64] = if b_has_it { &[4096, 8192] } else { &[4096] };
    let b = hand_trace_with_results(
        &[("producer", vec![("out_ptr0", Out, 4096, 0, 5)])],
        Some(b_results),
    );
    (a, b)
}

#[test]
fn a_launch_one_run_lacks_reaches_only_results_that_differ() {
    let benign = |b_has_it: bool| {
        let (a, b) = extra_writer_pair(b_has_it);
        let analysis = Analysis::run(&a, &b, Options::default());
        assert_eq!(
            analysis.verdict,
            Verdict::Benign,
            "{:?}",
            analysis.divergences
        );
        (a, b, analysis)
    };
    // What it wrote is in a result equal to the other run's: absorbed.
    let (_, _, analysis) = benign(true);
    assert!(matches!(
        analysis.divergences[0].impact,
        Impact::Absorbed(_)
    ));
    // In a result the other run lacks: nothing compares it.
    let (a, b, analysis) = benign(false);
    assert_eq!(analysis.divergences[0].impact, Impact::Uncompared);
    let report = Report::new(&a, &b, &analysis, usize::MAX);
    assert_eq!(report.root_causes[0].impact, Reach::Uncompared);
    let text = tritontui::output::summary(&report);
    assert!(
        text.contains("results without a counterpart (not compared): 1 in A, 0 in B"),
        "{text}"
    );
}

/// Two steps of `f` (inputs at 1024 and 2048) writing their outputs as
/// `outputs` say (address, hash before, hash after), then `cat` of the
/// views `reads` (address, hash) into a result whose hash is `result`.
fn two_steps_then_cat(outputs: [(u64, u64, u64); 2], reads: [(u64, u64); 2], result: u64) -> Trace {
    use tritontui_trace::Access::{In, Out};
    let [(p0, pre0, post0), (p1, pre1, post1)] = outputs;
    let [(r0, h0), (r1, h1)] = reads;
    hand_trace_with_results(
        &[
            (
                "f",
                vec![
                    ("in_ptr0", In, 1024, 1, 1),
                    ("out_ptr0", Out, p0, pre0, post0),
                ],
            ),
            (
                "f",
                vec![
                    ("in_ptr0", In, 2048, 2, 2),
                    ("out_ptr0", Out, p1, pre1, post1),
                ],
            ),
            (
                "cat",
                vec![
                    ("in_ptr0", In, r0, h0, h0),
                    ("in_ptr1", In, r1, h1, h1),
                    ("out_ptr0", Out, 16384, 0, result),
                ],
            ),
        ],
        Some(&[16384]),
    )
}

/// Run A writes both steps' outputs into one buffer (a CUDA graph's
/// static output) and so `cat`s the second step's twice; run B gives
/// each step its own buffer.
fn overwritten_output_pair() -> (Trace, Trace) {
    let a = two_steps_then_cat(
        [(4096, 0, 11), (4096, 11, 12)],
        [(4096, 12), (4096, 12)],
        99,
    );
    let b = two_steps_then_cat([(4096, 0, 11), (8192, 0, 12)], [(4096, 11), (8192, 12)], 98);
    (a, b)
}

#[test]
fn an_input_read_after_a_later_write_replaced_it_is_said() {
    let (a, b) = overwritten_output_pair();
    let analysis = Analysis::run(&a, &b, Options::default());
    assert_eq!(analysis.verdict, Verdict::Divergent);
    let roots = root_causes(&analysis);
    assert_eq!(roots.len(), 1, "{:?}", analysis.divergences);
    let root = roots[0];
    assert_eq!(
        (root.kind, root.a, root.b),
        (Kind::DivergentInput, Some(2), Some(2))
    );
    let overwrite = root.origins[0].overwrite.expect("the later write is found");
    assert_eq!(
        (overwrite.in_a, overwrite.by, overwrite.replaced),
        (true, 1, Some(0))
    );
    let report = Report::new(&a, &b, &analysis, usize::MAX);
    let first = report.first_divergence.expect("divergent");
    let json = serde_json::to_value(&first.overwritten).expect("json");
    assert_eq!(
        json,
        serde_json::json!({"run": "a", "by": 1, "by_replay": null, "replaced": 0, "replaced_replay": null, "shared_pool": false})
    );
    assert!(
        first.detail.contains(
            "run A read it after launch #1 f (out_ptr0) had overwritten what launch #0 f wrote there; run B read what launch #0 f (out_ptr0) wrote, its counterpart"
        ),
        "{}",
        first.detail
    );
}

#[test]
fn an_input_read_from_the_same_write_in_both_runs_is_no_overwrite() {
    // Both runs read the second step's output twice, which differs: the
    // reads come from counterparts, and the second `f` is the root cause.
    let (a, _) = overwritten_output_pair();
    let b = two_steps_then_cat(
        [(4096, 0, 11), (4096, 11, 13)],
        [(4096, 13), (4096, 13)],
        98,
    );
    let analysis = Analysis::run(&a, &b, Options::default());
    let roots = root_causes(&analysis);
    assert_eq!(roots[0].kind, Kind::NondeterministicKernel, "{roots:?}");
    assert!(
        analysis
            .divergences
            .iter()
            .flat_map(|d| &d.origins)
            .all(|o| o.overwrite.is_none())
    );
}

/// One program run twice owes equal bits (`check` turns numerics off):
/// the eager-against-compiled pair is then divergent, not equivalent; a
/// trace without samples is never judged by its numerics.
#[test]
fn numerics_judge_only_two_programs_with_samples_when_asked() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let open = |pair: &str, side: &str| Trace::open(&corpus.join(pair).join(side)).expect("trace");
    let (a, b) = (
        open("eager_against_compiled", "a.msgpack"),
        open("eager_against_compiled", "b.msgpack"),
    );
    let judged = Analysis::run(&a, &b, Options::default());
    assert_eq!(judged.verdict, Verdict::Equivalent);
    let owed_bits = Options {
        compare_numerics: false,
        ..Options::default()
    };
    let unjudged = Analysis::run(&a, &b, owed_bits);
    assert_eq!(unjudged.verdict, Verdict::Divergent);
    assert!(unjudged.accuracy.is_none() && unjudged.root_causes().count() > 0);
    // config_code was recorded without samples.
    let (a, b) = (
        open("config_code", "a.msgpack"),
        open("config_code", "b.msgpack"),
    );
    assert!(Analysis::run(&a, &b, Options::default()).accuracy.is_none());
}

/// A trace of draws from the default generator, each `(kernel, state)`:
/// `aten::randint.low_out` is Inductor's draw of seeds (from the whole
/// int64 range), any other an eager op drawing its own numbers.
fn draws_trace(draws: &[(&str, &str)]) -> Trace {
    use tritontui_trace::format::Scalar;
    use tritontui_trace::{Access, ArgValue, TraceWriter};
    let mut w = TraceWriter::new(Vec::new(), &hashed_header()).expect("header");
    let layout = w.layout("float32", 4, &[64], &[1], 0).expect("layout");
    for (seq, (kernel, state)) in draws.iter().enumerate() {
        let seq = seq as u64;
        let (defs, mut args) = if *kernel == "aten::randint.low_out" {
            (
                vec![("low", Access::In), ("out", Access::Out)],
                vec![ArgValue::Scalar(Scalar::Int(i64::MIN))],
            )
        } else {
            (vec![("self", Access::Inout)], Vec::new())
        };
        args.push(hashed(layout, 4096 * (seq + 1), 0, seq + 1));
        let mut defs = defs;
        defs.push(("default_generator", Access::In));
        args.push(ArgValue::Scalar(Scalar::Str((*state).into())));
        write_launch(&mut w, seq, kernel, &defs, args);
    }
    let bytes = w.finish(draws.len() as u64, "exit").expect("finish");
    Trace::from_bytes(Path::new("t"), &bytes).expect("load")
}

#[test]
fn random_numbers_part_where_a_run_draws_from_another_state_or_only_seeds_or_more() {
    use tritontui_engine::accuracy::random::RandomParting;
    let parting = |a: &[(&str, &str)], b: &[(&str, &str)]| {
        RandomParting::of(&draws_trace(a), &draws_trace(b)).map(|p| (p.a, p.b))
    };
    let (s0, s1) = (
        "<default generator cpu seed=1 state=0a>",
        "<default generator cpu seed=1 state=0b>",
    );
    // Eager dropout against compiled dropout that draws as eager does
    // (`fallback_random`): other ops, the same states, the same numbers.
    let eager = [
        ("aten::bernoulli_.float", s0),
        ("aten::bernoulli_.float", s1),
    ];
    let fallback = [("aten::native_dropout", s0), ("aten::native_dropout", s1)];
    assert_eq!(parting(&eager, &fallback), None);
    // Compiled code that draws seeds and makes its numbers in its kernels.
    assert_eq!(
        parting(&eager, &[("aten::randint.low_out", s0)]),
        Some((Some(0), Some(0)))
    );
    // Another state at the second draw (a reseed between them).
    let reseeded = [
        ("aten::bernoulli_.float", s0),
        ("aten::bernoulli_.float", s0),
    ];
    assert_eq!(parting(&eager, &reseeded), Some((Some(1), Some(1))));
    // A draw the other run never makes.
    assert_eq!(parting(&eager[..1], &eager), Some((None, Some(1))));
    // Attention takes the generator for its dropout alone: left at its
    // default, none, so it draws nothing.
    let attention = [
        eager[0],
        ("aten::_scaled_dot_product_flash_attention_for_cpu", s1),
        eager[1],
    ];
    assert_eq!(parting(&eager, &attention), None);
}

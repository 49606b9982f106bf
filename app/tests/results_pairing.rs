//! The runs' results paired only with their counterparts (issue 55): the
//! tensors one run alone holds, of the same view as a real result and
//! listed before it, never stand in for it, and tensors held from before
//! recording are not compared.

use proptest::prelude::*;
use std::path::Path;
use tritontui_engine::analysis::Verdict;
use tritontui_engine::{Analysis, Options};
use tritontui_synth::hand;
use tritontui_trace::format::{ArgValue, CallRecord, GraphDef};
use tritontui_trace::{Access, Record, ResultsRecord, Trace, TraceWriter};

/// Where the one launch writes its output.
const OUTPUT: u64 = 1 << 20;

/// One tensor of a hand-made trace: its address and hash.
type Tensor = (u64, u64);

/// What a hand-made run holds besides its compiled graph's call.
struct Run {
    /// The graph call's inputs, read by the launch.
    inputs: Vec<Tensor>,
    /// The launch's output hash.
    output: u64,
    /// Tensors alive when recording began (`held`).
    held: Vec<Tensor>,
    /// The tensors alive at the end, in the order the trace lists them,
    /// with their names (`""` for none).
    results: Vec<(Tensor, &'static str)>,
}

/// A trace of one call of graph `fxgraph` over `run.inputs` (named
/// `arg0_1`, ...), one launch reading them all and writing `OUTPUT`, and
/// its `held` and `results` records; every tensor has one view.
fn trace(run: &Run) -> Trace {
    let mut w = TraceWriter::new(Vec::new(), &hand::hashed_header()).expect("header");
    let layout = w
        .layout("float32", 4, &[128, 1], &[1, 1], 0)
        .expect("layout");
    let tensor = |(ptr, hash): Tensor| ArgValue::tensor(layout, ptr, 0, Some(hash), None);
    let live = |tensors: &[Tensor]| tensors.iter().map(|&t| tensor(t)).collect::<Vec<_>>();
    w.write(&Record::Held(ResultsRecord {
        before: 0,
        device: -1,
        args: live(&run.held),
        names: Vec::new(),
    }))
    .expect("held");
    w.write(&Record::Graph(GraphDef {
        id: 0,
        key: "fxgraph".into(),
        inputs: (0..run.inputs.len()).map(|i| format!("arg{i}_1")).collect(),
    }))
    .expect("graph");
    w.write(&Record::Call(CallRecord {
        graph: 0,
        before: 0,
        device: -1,
        first: 0,
        args: run
            .inputs
            .iter()
            .map(|&(ptr, hash)| ArgValue::tensor(layout, ptr, 0, Some(hash), Some(hash)))
            .collect(),
    }))
    .expect("call");
    let names: Vec<String> = (0..run.inputs.len())
        .map(|i| format!("in_ptr{i}"))
        .collect();
    let mut defs: Vec<(&str, Access)> = names.iter().map(|n| (n.as_str(), Access::In)).collect();
    defs.push(("out_ptr0", Access::Out));
    let mut args: Vec<ArgValue> = run
        .inputs
        .iter()
        .map(|&(ptr, hash)| ArgValue::tensor(layout, ptr, 0, Some(hash), Some(hash)))
        .collect();
    let mut output = ArgValue::tensor(layout, OUTPUT, 0, None, Some(run.output));
    if let ArgValue::Tensor(t) = &mut output {
        t.flags = tritontui_trace::TensorArg::WRITTEN;
    }
    args.push(output);
    hand::write_launch(&mut w, 0, "cpp_fused_addmm_0", &defs, args).expect("launch");
    w.write(&Record::Results(ResultsRecord {
        before: 1,
        device: -1,
        args: run.results.iter().map(|&(t, _)| tensor(t)).collect(),
        names: run.results.iter().map(|&(_, n)| n.to_owned()).collect(),
    }))
    .expect("results");
    let bytes = w.finish(1, "stopped").expect("finish");
    Trace::from_bytes(Path::new("t.msgpack"), &bytes).expect("load")
}

/// The address of extra tensor `e` of run B, apart from every real one.
fn extra_address(e: usize) -> u64 {
    (1 << 30) + 4096 * e as u64
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Run B holds extra tensors of the same view as the real results,
    /// listed before them (the output an earlier recorded block kept, a
    /// tensor filled outside the recorded region): the pair stays
    /// identical, whichever of the real results the extras come before,
    /// whether the real inputs were alive when recording began, whether
    /// the extras were, and whether the results are named.
    #[test]
    fn extra_tensors_of_one_run_never_stand_in_for_a_result(
        input_hashes in prop::collection::vec(any::<u64>(), 1..5),
        output in any::<u64>(),
        extras in prop::collection::vec((any::<u64>(), any::<bool>(), any::<prop::sample::Index>()), 1..5),
        inputs_held in any::<bool>(),
        named in any::<bool>(),
    ) {
        let inputs: Vec<Tensor> = input_hashes
            .iter()
            .enumerate()
            .map(|(i, &h)| (4096 * (i as u64 + 1), h))
            .collect();
        const NAMES: [&str; 4] = ["0.weight", "0.bias", "2.weight", "2.bias"];
        let real: Vec<(Tensor, &'static str)> = inputs
            .iter()
            .enumerate()
            .map(|(i, &t)| (t, if named { NAMES[i] } else { "" }))
            .chain([((OUTPUT, output), "")])
            .collect();
        let held = if inputs_held { inputs.clone() } else { Vec::new() };
        let a = Run { inputs: inputs.clone(), output, held: held.clone(), results: real.clone() };
        let mut b_results = real.clone();
        let mut b_held = held;
        for (e, &(hash, extra_held, before)) in extras.iter().enumerate() {
            let extra = (extra_address(e), hash);
            if extra_held {
                b_held.push(extra);
            }
            // Before one real result, however many extras already are.
            let real_at: Vec<usize> = (0..b_results.len())
                .filter(|&k| b_results[k].0.0 < (1 << 30))
                .collect();
            b_results.insert(real_at[before.index(real_at.len())], (extra, ""));
        }
        let b = Run { inputs, output, held: b_held, results: b_results };
        let (ta, tb) = (trace(&a), trace(&b));
        let analysis = Analysis::run(&ta, &tb, Options::default());
        prop_assert_eq!(analysis.verdict, Verdict::Identical, "{:?}", analysis.results);
        prop_assert!(analysis.results.differences.is_empty());
        // The output is compared in every case; the inputs unless held.
        let inputs_compared = if inputs_held { 0 } else { a.inputs.len() };
        prop_assert_eq!(analysis.results.compared, 1 + inputs_compared);
    }
}

#[test]
fn a_held_tensor_changed_outside_the_recorded_region_is_still_compared() {
    // The input was alive when recording began and its bytes changed
    // while no recorded launch wrote them, in run B only.
    let run = |end: u64| Run {
        inputs: vec![(4096, 7)],
        output: 9,
        held: vec![(4096, 7)],
        results: vec![((4096, end), "0.weight"), ((OUTPUT, 9), "")],
    };
    let (a, b) = (trace(&run(7)), trace(&run(8)));
    let analysis = Analysis::run(&a, &b, Options::default());
    assert_eq!(analysis.verdict, Verdict::Divergent);
    assert_eq!(analysis.results.held, (0, 0));
    assert_eq!(analysis.results.differences.len(), 1);
    assert_eq!(analysis.unexplained_results().count(), 1);
    let report = tritontui::Report::new(&a, &b, &analysis, usize::MAX);
    let first = report
        .first_divergence
        .expect("the result is the root cause");
    assert_eq!(first.kind, tritontui_engine::Kind::Result);
    assert!(
        first
            .detail
            .contains("the result 0.weight float32[128, 1] on cpu differs"),
        "{}",
        first.detail
    );
}

#[test]
fn held_tensors_are_counted_and_said_not_compared() {
    let run = Run {
        inputs: vec![(4096, 7)],
        output: 9,
        held: vec![(4096, 7), (8192, 3)],
        results: vec![((4096, 7), ""), ((8192, 3), ""), ((OUTPUT, 9), "")],
    };
    let other = Run {
        inputs: vec![(4096, 7)],
        output: 9,
        held: vec![(4096, 7)],
        results: vec![((4096, 7), ""), ((OUTPUT, 9), "")],
    };
    let (a, b) = (trace(&run), trace(&other));
    let analysis = Analysis::run(&a, &b, Options::default());
    assert_eq!(analysis.verdict, Verdict::Identical);
    assert_eq!(analysis.results.held, (2, 1));
    assert_eq!(analysis.results.unpaired, (0, 0));
    let report = tritontui::Report::new(&a, &b, &analysis, usize::MAX);
    let text = tritontui::output::summary(&report);
    assert!(
        text.contains(
            "tensors held from before recording, unchanged (not compared): 2 in A, 1 in B"
        ),
        "{text}"
    );
}

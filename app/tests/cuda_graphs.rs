//! The engine on runs whose launches ran in CUDA graph replays: traces
//! written as the recorder writes them (launches captured once, with
//! table slots for hashes; one `replay` record per replay with the table),
//! against each other and against runs that launched the same kernels
//! one by one.

use std::path::Path;
use tritontui::Report;
use tritontui::output::report::InReplay;
use tritontui::output::summary;
use tritontui_engine::Sides;
use tritontui_engine::analysis::Verdict;
use tritontui_engine::{Analysis, Options};
use tritontui_trace::format::{Captured, CudaGraphRecord, ReplayRecord};
use tritontui_trace::{
    Access, ArgDef, ArgValue, Header, KernelDef, LaunchRecord, Record, ResultsRecord, Trace,
    TraceWriter,
};

/// Where the step's tensors live: the graph's input, the scaled copy,
/// the sum, and a weight the sum reads.
const X: u64 = 0x1000;
const Y: u64 = 0x2000;
const Z: u64 = 0x3000;
const W: u64 = 0x4000;

/// The hashes of one step: `x` in, `y = scale(x)`, `z = sum(y, w)`.
#[derive(Clone, Copy)]
struct Step {
    x: u64,
    y: u64,
    z: u64,
}

/// A step's hashes from its input, with `noise` added to the sum (an
/// atomic sum that came out otherwise).
fn step(i: u64, noise: u64) -> Step {
    Step {
        x: 100 + i,
        y: 200 + i,
        z: 300 + i + noise,
    }
}

const WEIGHT: u64 = 77;

fn header() -> Header {
    let mut header = Header::new("test");
    header.options.hash = "tthash64-v1".into();
    header
}

/// The two kernels of a step: `scale` (in x, out y) and `sum` (in y and
/// w, out z); returns their ids.
fn kernels(w: &mut TraceWriter<Vec<u8>>) -> (u64, u64) {
    let mut kernel = |name: &str, args: &[(&str, Access)]| {
        w.add_kernel(KernelDef {
            id: 0,
            name: name.into(),
            backend: "triton".into(),
            args: args
                .iter()
                .map(|&(name, access)| ArgDef {
                    name: name.into(),
                    ty: "*fp32".into(),
                    access,
                })
                .collect(),
            source: None,
            meta: Default::default(),
            config: Default::default(),
        })
        .expect("kernel")
    };
    let scale = kernel(
        "triton_poi_scale_0",
        &[("in_ptr0", Access::In), ("out_ptr0", Access::Out)],
    );
    let sum = kernel(
        "triton_red_sum_1",
        &[
            ("in_ptr0", Access::In),
            ("in_ptr1", Access::In),
            ("out_ptr0", Access::Out),
        ],
    );
    (scale, sum)
}

fn launch(seq: u64, kernel: u64, captured: Option<Captured>, args: Vec<ArgValue>) -> Record {
    let record = LaunchRecord {
        seq,
        kernel,
        grid: vec![1],
        stream: 7,
        device: 0,
        thread: 1,
        ts: seq,
        autotune: false,
        captured,
        module: None,
        args,
    };
    if record.captured.is_some() {
        Record::Captured(record)
    } else {
        Record::Launch(record)
    }
}

/// A tensor argument: read (`written` false) or written, hashed (or, in
/// a captured launch, given its table slots) before and after.
fn tensor(layout: u64, ptr: u64, written: bool, pre: u64, post: u64) -> ArgValue {
    ArgValue::tensor(layout, ptr, u64::from(written), Some(pre), Some(post))
}

/// The step's launches with the hashes (or slots) `h` gives.
fn step_args(layout: u64, h: impl Fn(&str) -> (u64, u64)) -> [Vec<ArgValue>; 2] {
    let arg = |name: &str, ptr, written| {
        let (pre, post) = h(name);
        tensor(layout, ptr, written, pre, post)
    };
    [
        vec![arg("x", X, false), arg("y", Y, true)],
        vec![arg("y2", Y, false), arg("w", W, false), arg("z", Z, true)],
    ]
}

/// Ends a trace with the results (z and the weight) and loads it.
fn finish(mut w: TraceWriter<Vec<u8>>, layout: u64, seq: u64, z: u64) -> Trace {
    w.write(&Record::Results(ResultsRecord {
        before: seq,
        device: 0,
        args: vec![
            tensor(layout, Z, false, z, z),
            tensor(layout, W, false, WEIGHT, WEIGHT),
        ],
        names: Vec::new(),
    }))
    .expect("results");
    let bytes = w.finish(seq, "exit").expect("finish");
    Trace::from_bytes(Path::new("t.msgpack"), &bytes).expect("load")
}

/// The record of graph `graph`, captured on stream 7 from `pool`.
fn graph_record(graph: u64, launches: u32, slots: u32, pool: Option<[u64; 2]>) -> Record {
    Record::CudaGraph(CudaGraphRecord {
        graph,
        launches,
        slots,
        device: 0,
        stream: 7,
        missing: String::new(),
        pool,
        bytes: 0,
        hash_kernels: 0,
        ts: 2,
    })
}

/// A run that captures the step into CUDA graph 1 and replays it once per
/// step of `steps`, as the recorder writes it.
fn graphed(steps: &[Step]) -> Trace {
    let mut w = TraceWriter::new(Vec::new(), &header()).expect("header");
    let layout = w.layout("float32", 4, &[64], &[1], 0).expect("layout");
    let (scale, sum) = kernels(&mut w);
    // The table's slots, in the order the hashes were captured.
    let slots = [
        "x.pre", "y.pre", "x.post", "y.post", "y2.pre", "w.pre", "z.pre",
    ]
    .into_iter()
    .chain(["y2.post", "w.post", "z.post"])
    .collect::<Vec<_>>();
    let slot = |name: &str, when: &str| slots.iter().position(|s| *s == format!("{name}.{when}"));
    let [first, second] = step_args(layout, |name| {
        (
            slot(name, "pre").expect("slot") as u64,
            slot(name, "post").expect("slot") as u64,
        )
    });
    for (index, (kernel, args)) in [(scale, first), (sum, second)].into_iter().enumerate() {
        let place = Captured {
            graph: 1,
            index: index as u32,
        };
        w.write(&launch(index as u64, kernel, Some(place), args))
            .expect("captured");
    }
    w.write(&graph_record(1, 2, slots.len() as u32, None))
        .expect("graph");
    let mut seq = 2;
    let mut x_before = 0;
    for (n, s) in steps.iter().enumerate() {
        let value = |name: &str| match name {
            "x.pre" | "x.post" => s.x,
            "y.pre" => x_before,
            "y.post" | "y2.pre" | "y2.post" => s.y,
            "w.pre" | "w.post" => WEIGHT,
            "z.pre" => 0,
            _ => s.z,
        };
        w.write(&Record::Replay(ReplayRecord {
            graph: 1,
            n: n as u64,
            first: seq,
            stream: 7,
            thread: 1,
            hashes: slots.iter().map(|s| value(s)).collect(),
            ts: seq,
        }))
        .expect("replay");
        seq += 2;
        x_before = s.y;
    }
    finish(w, layout, seq, steps.last().map_or(0, |s| s.z))
}

/// The same steps, each kernel launched on its own.
fn ungraphed(steps: &[Step]) -> Trace {
    let mut w = TraceWriter::new(Vec::new(), &header()).expect("header");
    let layout = w.layout("float32", 4, &[64], &[1], 0).expect("layout");
    let (scale, sum) = kernels(&mut w);
    let mut seq = 0;
    let mut y_before = 0;
    for s in steps {
        let [first, second] = step_args(layout, |name| match name {
            "x" => (s.x, s.x),
            "y" => (y_before, s.y),
            "y2" => (s.y, s.y),
            "w" => (WEIGHT, WEIGHT),
            _ => (0, s.z),
        });
        w.write(&launch(seq, scale, None, first)).expect("launch");
        w.write(&launch(seq + 1, sum, None, second))
            .expect("launch");
        seq += 2;
        y_before = s.y;
    }
    finish(w, layout, seq, steps.last().map_or(0, |s| s.z))
}

/// Compares the runs, which must get `verdict`.
fn compared(a: &Trace, b: &Trace, verdict: Verdict) -> Analysis {
    let analysis = Analysis::run(a, b, Options::default());
    assert_eq!(analysis.verdict, verdict, "{:?}", analysis.divergences);
    analysis
}

fn steps(noise: &[u64]) -> Vec<Step> {
    noise
        .iter()
        .enumerate()
        .map(|(i, &n)| step(i as u64, n))
        .collect()
}

#[test]
fn each_replay_expands_into_the_graph_s_launches_with_the_hashes_of_its_table() {
    let trace = graphed(&steps(&[0, 0, 0]));
    assert_eq!(trace.replays.len(), 3);
    assert_eq!(trace.launches.len(), 6);
    let seqs: Vec<u64> = trace.launches.iter().map(|l| l.seq).collect();
    assert_eq!(seqs, [2, 3, 4, 5, 6, 7]);
    for (i, launch) in trace.launches.iter().enumerate() {
        let replay = trace.replay_of(launch).expect("in a replay");
        assert_eq!((replay.graph, replay.n), (1, i as u64 / 2));
        assert!(replay.hashed);
    }
    // Replay 1's sum read y = 201 and wrote z = 301 (written: it changed).
    let sum = &trace.launches[3];
    let args: Vec<_> = trace.args_of(sum).collect();
    let tritontui_trace::ArgRef::Tensor(z) = args[2] else {
        panic!("z is a tensor")
    };
    assert_eq!((z.pre, z.post, z.written), (Some(0), Some(301), true));
    let tritontui_trace::ArgRef::Tensor(y) = args[0] else {
        panic!("y is a tensor")
    };
    assert_eq!((y.pre, y.post, y.written), (Some(201), Some(201), false));
}

#[test]
fn a_replayed_launch_runs_on_the_replay_s_stream_unless_captured_on_a_forked_one() {
    let mut w = TraceWriter::new(Vec::new(), &header()).expect("header");
    let layout = w.layout("float32", 4, &[64], &[1], 0).expect("layout");
    let (scale, sum) = kernels(&mut w);
    // Captured on the capture's stream 7, then on stream 9 it forked.
    for (index, (kernel, stream)) in [(scale, 7), (sum, 9)].into_iter().enumerate() {
        let Record::Captured(mut record) = launch(
            index as u64,
            kernel,
            Some(Captured {
                graph: 1,
                index: index as u32,
            }),
            vec![tensor(layout, X, true, 0, 1)],
        ) else {
            panic!("a captured launch")
        };
        record.stream = stream;
        w.write(&Record::Captured(record)).expect("captured");
    }
    w.write(&graph_record(1, 2, 2, None)).expect("graph");
    w.write(&Record::Replay(ReplayRecord {
        graph: 1,
        n: 0,
        first: 2,
        stream: 11,
        thread: 1,
        hashes: vec![5, 6],
        ts: 2,
    }))
    .expect("replay");
    let trace = finish(w, layout, 4, 0);
    let streams: Vec<u64> = trace.launches.iter().map(|l| l.stream).collect();
    assert_eq!(streams, [11, 9]);
}

#[test]
fn equal_graphed_runs_are_identical() {
    let (a, b) = (graphed(&steps(&[0, 0, 0])), graphed(&steps(&[0, 0, 0])));
    compared(&a, &b, Verdict::Identical);
}

#[test]
fn a_divergence_in_a_replay_is_named_by_its_graph_and_replay() {
    // The sum of replay 2 came out otherwise; replays 0 and 1, and the
    // scale of replay 2, agree.
    let (a, b) = (graphed(&steps(&[0, 0, 0])), graphed(&steps(&[0, 0, 5])));
    let analysis = compared(&a, &b, Verdict::Divergent);
    let report = Report::new(&a, &b, &analysis, usize::MAX);
    let first = report.first_divergence.as_ref().expect("a divergence");
    assert_eq!(first.kernel, "triton_red_sum_1");
    assert_eq!((first.a_index, first.b_index), (Some(7), Some(7)));
    let in_replay = Some(InReplay {
        graph: 1,
        replay: 2,
    });
    assert_eq!(
        first.in_replay,
        Sides {
            a: in_replay,
            b: in_replay
        }
    );
    assert_eq!(report.divergence_count, 1, "{:?}", report.divergences);
    let text = summary(&report);
    assert!(
        text.contains("A: replay 2 of CUDA graph 1, B: replay 2 of CUDA graph 1"),
        "{text}"
    );
}

#[test]
fn a_graphed_run_aligns_with_an_ungraphed_one_launch_by_launch_and_says_what_differs() {
    let (a, b) = (graphed(&steps(&[0, 0, 0])), ungraphed(&steps(&[0, 0, 0])));
    let analysis = compared(&a, &b, Verdict::Identical);
    assert_eq!(analysis.alignment.matched, 6);
    let report = Report::new(&a, &b, &analysis, usize::MAX);
    assert_eq!(report.cuda_graph_replays, Sides { a: 3, b: 0 });
    assert!(
        summary(&report).contains("CUDA graph replays differ: A 3, B 0"),
        "{}",
        summary(&report)
    );
    // A difference in one replay is found against the ungraphed launch.
    let (a, b) = (graphed(&steps(&[0, 9, 0])), ungraphed(&steps(&[0, 0, 0])));
    let analysis = Analysis::run(&a, &b, Options::default());
    let report = Report::new(&a, &b, &analysis, usize::MAX);
    let first = report.first_divergence.as_ref().expect("a divergence");
    assert_eq!(first.kernel, "triton_red_sum_1");
    assert_eq!(
        first.in_replay,
        Sides {
            a: Some(InReplay {
                graph: 1,
                replay: 1
            }),
            b: None
        }
    );
}

/// The arguments of `sum` reading y (hash `y`) and the weight, writing z
/// (hash `z`).
fn summed(layout: u64, y: u64, z: u64) -> Vec<ArgValue> {
    vec![
        tensor(layout, Y, false, y, y),
        tensor(layout, W, false, WEIGHT, WEIGHT),
        tensor(layout, Z, true, 0, z),
    ]
}

/// Run A captures `scale` twice, into graphs 1 and 2 (captured from the
/// memory pools `pools`), each writing the same output buffer; it replays
/// graph 1 on x, then graph 2 on x2, then sums the output of graph 1 it
/// kept, which graph 2's replay overwrote. Run B runs both scales on
/// their own, into two buffers, and sums the first.
fn kept_across_graphs(pools: [Option<[u64; 2]>; 2]) -> (Trace, Trace) {
    const X2: u64 = 0x5000;
    const Y2: u64 = 0x6000;
    let mut w = TraceWriter::new(Vec::new(), &header()).expect("header");
    let layout = w.layout("float32", 4, &[64], &[1], 0).expect("layout");
    let (scale, sum) = kernels(&mut w);
    for (index, (x, pool)) in [(X, pools[0]), (X2, pools[1])].into_iter().enumerate() {
        let graph = index as u64 + 1;
        let args = vec![
            tensor(layout, x, false, 0, 2),
            tensor(layout, Y, true, 1, 3),
        ];
        let place = Captured { graph, index: 0 };
        w.write(&launch(index as u64, scale, Some(place), args))
            .expect("captured");
        w.write(&graph_record(graph, 1, 4, pool)).expect("graph");
    }
    for (graph, hashes) in [(1, vec![100, 0, 100, 200]), (2, vec![101, 200, 101, 201])] {
        w.write(&Record::Replay(ReplayRecord {
            graph,
            n: 0,
            first: graph + 1,
            stream: 7,
            thread: 1,
            hashes,
            ts: graph + 1,
        }))
        .expect("replay");
    }
    w.write(&launch(4, sum, None, summed(layout, 201, 999)))
        .expect("launch");
    let a = finish(w, layout, 5, 999);

    let mut w = TraceWriter::new(Vec::new(), &header()).expect("header");
    let layout = w.layout("float32", 4, &[64], &[1], 0).expect("layout");
    let (scale, sum) = kernels(&mut w);
    for (seq, (x, y, hx, hy)) in [(X, Y, 100, 200), (X2, Y2, 101, 201)]
        .into_iter()
        .enumerate()
    {
        let args = vec![
            tensor(layout, x, false, hx, hx),
            tensor(layout, y, true, 0, hy),
        ];
        w.write(&launch(seq as u64, scale, None, args))
            .expect("launch");
    }
    w.write(&launch(2, sum, None, summed(layout, 200, 998)))
        .expect("launch");
    (a, finish(w, layout, 3, 998))
}

#[test]
fn an_output_one_graph_s_replay_overwrote_in_a_shared_pool_is_said() {
    let shared = |pools| {
        let (a, b) = kept_across_graphs(pools);
        let analysis = compared(&a, &b, Verdict::Divergent);
        let report = Report::new(&a, &b, &analysis, usize::MAX);
        let first = report.first_divergence.expect("a divergence");
        assert_eq!(first.kernel, "triton_red_sum_1");
        let overwritten = first.overwritten.expect("an overwrite");
        let replays = (overwritten.by_replay, overwritten.replaced_replay);
        let replay = |graph| Some(InReplay { graph, replay: 0 });
        assert_eq!((overwritten.run, replays), ("a", (replay(2), replay(1))));
        let said = first
            .detail
            .contains("CUDA graphs 1 and 2 were captured from one memory pool");
        assert_eq!(said, overwritten.shared_pool, "{}", first.detail);
        said
    };
    assert!(shared([Some([0, 1]), Some([0, 1])]));
    assert!(!shared([Some([0, 1]), Some([0, 2])]));
    assert!(!shared([None, None]));
}

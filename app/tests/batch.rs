//! One request compared by its rows between two batchings, on traces
//! built by hand: where the two batch sizes compiled other kernels (a
//! reduction split in two for one request, one kernel for the batch), the
//! stretch of launches between two aligned ones is judged as one.

use std::path::Path;
use tritontui_engine::analysis::Verdict;
use tritontui_engine::{Analysis, Options};
use tritontui_synth::hand::{self, hashed_header};
use tritontui_trace::{Access, ArgValue, Trace, TraceWriter};

/// One tensor argument of a hand-built launch: its name, access, address,
/// shape and the hashes of its rows after the launch (the whole tensor's
/// hash is their first).
type RowsArg = (&'static str, Access, u64, Vec<u64>, Vec<u64>);

/// A trace recorded with `rows`, of C++-like launches built by hand.
fn rows_trace(launches: Vec<(&str, Vec<RowsArg>)>) -> Trace {
    rows_trace_with_result(launches, None)
}

/// Like [`rows_trace`], ending with a `results` record of one float32
/// tensor (its address, shape and hash) when given.
fn rows_trace_with_result(
    launches: Vec<(&str, Vec<RowsArg>)>,
    result: Option<(u64, Vec<u64>, u64)>,
) -> Trace {
    use tritontui_trace::{Record, ResultsRecord};
    let mut header = hashed_header();
    header.options.rows = true;
    let mut w = TraceWriter::new(Vec::new(), &header).expect("header");
    for (seq, (name, args)) in launches.iter().enumerate() {
        let defs: Vec<_> = args.iter().map(|(n, access, ..)| (*n, *access)).collect();
        let values = args
            .iter()
            .map(|(_, access, ptr, shape, rows)| {
                let stride: Vec<i64> = (0..shape.len())
                    .map(|d| shape[d + 1..].iter().product::<u64>() as i64)
                    .collect();
                let layout = w.layout("float32", 4, shape, &stride, 0).expect("layout");
                let whole = rows.iter().fold(0u64, |h, r| h.rotate_left(7) ^ r);
                let mut value = hand::hashed(layout, *ptr, whole, whole);
                if let ArgValue::Tensor(t) = &mut value {
                    t.rows = Some(rows.clone());
                    if !access.writes() {
                        t.flags = 0;
                    }
                }
                value
            })
            .collect();
        hand::write_launch(&mut w, seq as u64, name, &defs, values).expect("launch");
    }
    if let Some((ptr, shape, hash)) = result {
        let stride: Vec<i64> = (0..shape.len())
            .map(|d| shape[d + 1..].iter().product::<u64>() as i64)
            .collect();
        let layout = w.layout("float32", 4, &shape, &stride, 0).expect("layout");
        let record = Record::Results(ResultsRecord {
            before: launches.len() as u64,
            device: -1,
            args: vec![hand::hashed(layout, ptr, hash, hash)],
            names: Vec::new(),
        });
        w.write(&record).expect("results");
    }
    let bytes = w.finish(launches.len() as u64, "exit").expect("finish");
    Trace::from_bytes(Path::new("t"), &bytes).expect("load")
}

/// An RMSNorm then a GELU over a request of one row: run A (the request
/// alone) splits the norm's reduction into partial sums and a combine,
/// then normalizes; run B (a batch of 4) does it in one kernel. Row
/// hashes: the request's row of the input is 10 in both; `rstd`, `norm`
/// and `gelu` are the request's row of what each run wrote.
fn split_pair(rstd: (u64, u64), norm: (u64, u64), gelu: (u64, u64)) -> (Trace, Trace) {
    use Access::{In, Out};
    let a = rows_trace(vec![
        (
            "triton_red_fused_mean_pow_0",
            vec![
                ("in_ptr0", In, 0x100, vec![1, 8], vec![10]),
                ("out_ptr0", Out, 0x200, vec![1, 4], vec![77]),
            ],
        ),
        (
            "triton_per_fused_mean_pow_rsqrt_1",
            vec![
                ("in_ptr0", In, 0x200, vec![1, 4], vec![77]),
                ("out_ptr0", Out, 0x300, vec![1, 1], vec![rstd.0]),
            ],
        ),
        (
            "triton_poi_fused_mul_2",
            vec![
                ("in_ptr0", In, 0x100, vec![1, 8], vec![10]),
                ("in_ptr1", In, 0x300, vec![1, 1], vec![rstd.0]),
                ("out_ptr0", Out, 0x400, vec![1, 8], vec![norm.0]),
            ],
        ),
        (
            "triton_poi_fused_gelu_3",
            vec![
                ("in_ptr0", In, 0x400, vec![1, 8], vec![norm.0]),
                ("out_ptr0", Out, 0x500, vec![1, 8], vec![gelu.0]),
            ],
        ),
    ]);
    let b = rows_trace(vec![
        (
            "triton_red_fused_mean_mul_pow_rsqrt_0",
            vec![
                ("in_ptr0", In, 0x100, vec![4, 8], vec![10, 11, 12, 13]),
                ("out_ptr0", Out, 0x300, vec![4, 1], vec![rstd.1, 1, 2, 3]),
                ("out_ptr1", Out, 0x400, vec![4, 8], vec![norm.1, 1, 2, 3]),
            ],
        ),
        (
            "triton_poi_fused_gelu_1",
            vec![
                ("in_ptr0", In, 0x400, vec![4, 8], vec![norm.1, 1, 2, 3]),
                ("out_ptr0", Out, 0x500, vec![4, 8], vec![gelu.1, 1, 2, 3]),
            ],
        ),
    ]);
    (a, b)
}

#[test]
fn a_reduction_split_for_one_request_is_the_batch_variant_stretch() {
    let (a, b) = split_pair((20, 21), (30, 31), (40, 41));
    let analysis = Analysis::run(&a, &b, Options::default());
    let batch = analysis.batch.as_ref().expect("a batch comparison");
    assert_eq!(batch.batch, (1, 4));
    // The GELUs align although Inductor numbered them 3 and 1.
    assert_eq!(batch.unaligned, (3, 1));
    let root = batch.root_cause.as_ref().expect("a batch-variant stretch");
    assert_eq!(root.stretch, (vec![0, 1, 2], vec![0]));
    // The first differing tensor the stretch wrote: `rstd`, by the combine
    // in A and the one kernel in B.
    assert_eq!((root.a, root.b), (1, 0));
    assert_eq!(batch.carried, 1);
    assert_eq!(analysis.verdict, Verdict::Divergent);
    assert!(!batch.rows_identical());
    // The root cause's line says it stands for a stretch.
    let report = tritontui::Report::new(&a, &b, &analysis, usize::MAX);
    let root = &report.root_causes[0];
    assert!(
        root.impact_detail.contains("3 in A where B ran 1"),
        "{}",
        root.impact_detail
    );
}

#[test]
fn a_split_that_keeps_the_request_s_bits_is_identical_on_its_rows() {
    let (a, b) = split_pair((20, 20), (30, 30), (40, 40));
    let analysis = Analysis::run(&a, &b, Options::default());
    let batch = analysis.batch.as_ref().expect("a batch comparison");
    assert!(batch.root_cause.is_none(), "{batch:?}");
    assert!(batch.rows_identical(), "{batch:?}");
    assert_eq!(analysis.verdict, Verdict::Identical);
}

#[test]
fn a_differing_request_row_after_a_stretch_that_agrees_names_the_next_kernel() {
    // The norm agrees; only the GELU (aligned) writes another row.
    let (a, b) = split_pair((20, 20), (30, 30), (40, 41));
    let analysis = Analysis::run(&a, &b, Options::default());
    let batch = analysis.batch.as_ref().expect("a batch comparison");
    let root = batch.root_cause.as_ref().expect("a batch-variant launch");
    assert_eq!((root.a, root.b), (3, 1));
    assert!(root.stretch.0.is_empty());
}

#[test]
fn a_launch_only_one_run_made_keeps_the_rows_from_being_called_identical() {
    use Access::{In, Out};
    let gelu = |written: u64, extent: u64, request: Vec<u64>| {
        (
            "triton_poi_fused_gelu_0",
            vec![
                ("in_ptr0", In, 0x100, vec![extent, 8], request.clone()),
                ("out_ptr0", Out, 0x200, vec![extent, 8], {
                    let mut out = request.clone();
                    out[0] = written;
                    out
                }),
            ],
        )
    };
    let a = rows_trace(vec![gelu(40, 1, vec![10])]);
    // Run B copies the GELU's output out once more, a launch A never made:
    // what it wrote is not compared.
    let b = rows_trace(vec![
        gelu(40, 4, vec![10, 11, 12, 13]),
        (
            "aten::clone",
            vec![
                ("self", In, 0x200, vec![4, 8], vec![40, 1, 2, 3]),
                ("result", Out, 0x300, vec![4, 8], vec![41, 1, 2, 3]),
            ],
        ),
    ]);
    let analysis = Analysis::run(&a, &b, Options::default());
    let batch = analysis.batch.as_ref().expect("a batch comparison");
    assert_eq!(batch.one_sided, 1);
    assert!(!batch.rows_identical(), "{batch:?}");
    assert_ne!(analysis.verdict, Verdict::Identical);
    let report = tritontui::Report::new(&a, &b, &analysis, usize::MAX);
    let said = report.batch.expect("a batch report").detail.join("\n");
    assert!(
        said.contains("1 stretch of launches only one run made"),
        "{said}"
    );
}

#[test]
fn a_request_output_that_differs_outweighs_rows_that_agree() {
    use Access::{In, Out};
    // The request's own output, [8] in both runs, comes out of recording
    // holding other bits (written where nothing recorded it): every launch's
    // rows agree, but the runs' results do not.
    let gelu = |extent: u64, request: Vec<u64>| {
        (
            "triton_poi_fused_gelu_0",
            vec![
                ("in_ptr0", In, 0x100, vec![extent, 8], request.clone()),
                ("out_ptr0", Out, 0x200, vec![extent, 8], request),
            ],
        )
    };
    let a = rows_trace_with_result(vec![gelu(1, vec![10])], Some((0x900, vec![8], 5)));
    let b = rows_trace_with_result(
        vec![gelu(4, vec![10, 11, 12, 13])],
        Some((0x900, vec![8], 6)),
    );
    let analysis = Analysis::run(&a, &b, Options::default());
    let batch = analysis.batch.as_ref().expect("a batch comparison");
    assert!(batch.rows_identical(), "{batch:?}");
    assert_eq!(analysis.results.differences.len(), 1);
    assert_eq!(analysis.verdict, Verdict::Divergent);
}

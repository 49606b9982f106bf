//! Writer → reader round trips, early ends and malformed input.

use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;
use tritontui_trace::format::{
    CompileRecord, CustomHashRecord, EndRecord, MarkerRecord, ProcessGroupRecord, ProcessRecord,
    RecordOptions, SourceDef, StepRecord, ValuesRecord,
};
use tritontui_trace::{
    Access, ArgDef, ArgRef, ArgValue, CallRecord, EarlyEnd, GraphDef, Header, InputRecord,
    KernelDef, LaunchRecord, LayoutDef, Next, Record, RecordReader, ResultsRecord, Scalar, Stats,
    TensorArg, Trace, TraceError, TraceWriter,
};

fn scalar() -> impl Strategy<Value = Scalar> {
    prop_oneof![
        Just(Scalar::None),
        any::<bool>().prop_map(Scalar::Bool),
        any::<i64>().prop_map(Scalar::Int),
        ((i64::MAX as u64 + 1)..=u64::MAX).prop_map(Scalar::UInt),
        prop::num::f64::NORMAL.prop_map(Scalar::Float),
        "[a-z_]{0,12}".prop_map(Scalar::Str),
    ]
}

fn scalar_map() -> impl Strategy<Value = BTreeMap<String, Scalar>> {
    prop::collection::btree_map("[a-zA-Z_]{1,10}", scalar(), 0..4)
}

fn tensor_arg() -> impl Strategy<Value = ArgValue> {
    let stats = (
        prop::num::f64::NORMAL,
        prop::num::f64::NORMAL,
        prop::num::f64::NORMAL,
        any::<u64>(),
        any::<u64>(),
    )
        .prop_map(|(min, max, mean_abs, nan, inf)| Stats {
            min,
            max,
            mean_abs,
            nan,
            inf,
        });
    (
        0u64..1000,
        any::<u64>(),
        0u64..2,
        any::<Option<u64>>(),
        any::<Option<u64>>(),
        prop::option::of(stats),
    )
        .prop_map(|(layout, ptr, flags, pre, post, stats)| {
            ArgValue::Tensor(TensorArg {
                layout,
                ptr,
                flags,
                pre,
                post,
                stats,
                // Samples travel in a record of their own.
                samples: None,
                rows: None,
            })
        })
}

fn record() -> impl Strategy<Value = Record> {
    let launch = (
        any::<u64>(),
        any::<u64>(),
        prop::collection::vec(any::<u64>(), 0..=3),
        any::<u64>(),
        any::<i32>(),
        any::<u64>(),
        any::<u64>(),
        any::<bool>(),
        prop::collection::vec(
            prop_oneof![tensor_arg(), scalar().prop_map(ArgValue::Scalar)],
            0..8,
        ),
    )
        .prop_map(
            |(seq, kernel, grid, stream, device, thread, ts, autotune, args)| {
                Record::Launch(LaunchRecord {
                    seq,
                    kernel,
                    grid,
                    stream,
                    device,
                    thread,
                    ts,
                    autotune,
                    captured: None,
                    module: None,
                    args,
                })
            },
        );
    let kernel = (
        any::<u64>(),
        "[a-z_0-9]{1,30}",
        prop::collection::vec(
            (
                "[a-z_0-9]{1,8}",
                "[*a-z0-9]{0,6}",
                prop_oneof![Just(Access::In), Just(Access::Out), Just(Access::Inout)],
            ),
            0..6,
        ),
        any::<Option<u64>>(),
        scalar_map(),
        scalar_map(),
    )
        .prop_map(|(id, name, args, source, meta, config)| {
            Record::Kernel(KernelDef {
                id,
                name,
                backend: "triton".into(),
                args: args
                    .into_iter()
                    .map(|(name, ty, access)| ArgDef { name, ty, access })
                    .collect(),
                source,
                meta,
                config,
            })
        });
    let layout = (
        any::<u64>(),
        prop::collection::vec(0u64..1 << 20, 0..4),
        any::<u64>(),
    )
        .prop_map(|(id, shape, offset)| {
            let stride: Vec<i64> = shape.iter().map(|&s| s as i64).collect();
            Record::Layout(LayoutDef {
                id,
                dtype: "float32".into(),
                itemsize: 4,
                extent: LayoutDef::extent_of(&shape, &stride, 4),
                shape,
                stride,
                offset,
            })
        });
    let other = prop_oneof![
        (any::<u64>(), ".{0,40}").prop_map(|(id, text)| Record::Source(SourceDef {
            id,
            path: "/tmp/k.py".into(),
            lang: "python".into(),
            text,
        })),
        (any::<u32>(), prop::collection::vec(".{0,10}", 0..4)).prop_map(|(pid, cmdline)| {
            Record::Process(ProcessRecord {
                pid,
                ppid: 1,
                role: "compile-worker".into(),
                host: "h".into(),
                cmdline,
                start_ns: 5,
                boot_id: "b".into(),
            })
        }),
        (".{0,10}", any::<Option<u64>>()).prop_map(|(label, after)| Record::Marker(MarkerRecord {
            label,
            after,
            ts: 9,
            thread: 3,
        })),
        (any::<u64>(), any::<Option<u64>>(), "optimizer|user").prop_map(|(step, after, by)| {
            Record::Step(StepRecord {
                step,
                after,
                by,
                ts: 4,
            })
        }),
        (
            ".{0,10}",
            ".{0,10}",
            prop::collection::vec(any::<u32>(), 0..4)
        )
            .prop_map(
                |(name, desc, ranks)| Record::ProcessGroup(ProcessGroupRecord {
                    name,
                    desc,
                    backend: "nccl".into(),
                    ranks,
                    ts: 4,
                })
            ),
        (any::<u64>(), ".{0,16}", any::<u64>()).prop_map(|(seq, file, bytes)| {
            Record::Values(ValuesRecord {
                seq,
                file,
                bytes,
                ts: 6,
            })
        }),
        (
            any::<u64>(),
            "[a-z_]{1,10}",
            prop::collection::vec((any::<u32>(), scalar(), scalar()), 0..4)
        )
            .prop_map(
                |(seq, function, args)| Record::CustomHash(CustomHashRecord {
                    seq,
                    function,
                    args,
                    ts: 7,
                })
            ),
        ("[a-z_0-9]{1,10}", tensor_arg()).prop_map(|(name, tensor)| Record::Input(InputRecord {
            name,
            graph: "graph_0".into(),
            before: 3,
            device: 0,
            tensor,
        })),
        (
            any::<u64>(),
            ".{0,20}",
            prop::collection::vec("[a-z_0-9]{1,10}", 0..4)
        )
            .prop_map(|(id, key, inputs)| Record::Graph(GraphDef { id, key, inputs })),
        (
            any::<u64>(),
            any::<i32>(),
            any::<u64>(),
            prop::collection::vec(
                prop_oneof![tensor_arg(), scalar().prop_map(ArgValue::Scalar)],
                0..4
            ),
        )
            .prop_map(|(graph, device, first, args)| Record::Call(CallRecord {
                graph,
                before: 3,
                device,
                first,
                args,
            })),
        scalar_map().prop_map(|info| Record::Compile(CompileRecord {
            event: "autotune".into(),
            name: "k".into(),
            pid: 7,
            ts: 1,
            dur_ns: 2,
            info,
        })),
        (
            any::<bool>(),
            any::<i32>(),
            prop::collection::vec(tensor_arg(), 0..4),
            prop::collection::vec("[a-z_0-9.]{0,12}", 0..4),
        )
            .prop_map(|(held, device, args, names)| {
                let live = ResultsRecord {
                    before: 3,
                    device,
                    args,
                    // A writer leaves out names that are all empty.
                    names: if names.iter().all(String::is_empty) {
                        Vec::new()
                    } else {
                        names
                    },
                };
                if held {
                    Record::Held(live)
                } else {
                    Record::Results(live)
                }
            }),
    ];
    prop_oneof![4 => launch, 1 => kernel, 1 => layout, 1 => other]
}

fn header() -> Header {
    let mut header = Header::new("tritontui-recorder test");
    header.host = "host".into();
    header.pid = 42;
    header.argv = vec!["python".into(), "train.py".into()];
    header.torch = Some("2.11.0".into());
    header.devices = vec!["NVIDIA H100".into()];
    header.options = RecordOptions {
        hash: "tthash64-v1".into(),
        hash_inputs: true,
        hash_outputs: true,
        ..RecordOptions::default()
    };
    header
}

#[test]
fn a_rank_header_round_trips_and_a_header_without_one_reads_as_none() {
    use tritontui_trace::Distributed;
    let rank = Distributed {
        rank: 3,
        world_size: 8,
        local_rank: 1,
        local_world_size: 2,
        node_rank: 1,
        run_id: "job-7".into(),
    };
    for distributed in [Some(rank), None] {
        let header = Header {
            distributed: distributed.clone(),
            ..header()
        };
        let mut bytes = Vec::new();
        TraceWriter::new(&mut bytes, &header).expect("header");
        let (read, _) = RecordReader::open(Path::new("t"), &bytes).expect("open");
        assert_eq!(read.distributed, distributed);
    }
}

fn write_all(records: &[Record]) -> Vec<u8> {
    let mut writer = TraceWriter::new(Vec::new(), &header()).expect("header");
    for record in records {
        writer.write(record).expect("write");
    }
    writer.finish(0, "exit").expect("finish")
}

proptest! {
    #[test]
    fn every_record_reads_back_as_written(records in prop::collection::vec(record(), 0..40)) {
        let bytes = write_all(&records);
        let (read_header, mut reader) = RecordReader::open(Path::new("t"), &bytes).expect("open");
        prop_assert_eq!(read_header, header());
        let mut back = Vec::new();
        while let Next::Record(_, record) = reader.next_record().expect("record") {
            back.push(record);
        }
        let ended_cleanly = matches!(back.pop(), Some(Record::End(EndRecord { reason, .. })) if reason == "exit");
        prop_assert!(ended_cleanly);
        prop_assert_eq!(back, records);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = Trace::from_bytes(Path::new("fuzz"), &bytes);
    }

    #[test]
    fn mutated_traces_never_panic(at in 0usize..2000, byte in any::<u8>()) {
        let mut bytes = sample_trace();
        let at = at % bytes.len();
        bytes[at] = byte;
        let _ = Trace::from_bytes(Path::new("fuzz"), &bytes);
    }
}

/// A small valid trace: one kernel, two layouts, three launches.
fn sample_trace() -> Vec<u8> {
    let mut w = TraceWriter::new(Vec::new(), &header()).expect("header");
    let src = w
        .add_source("/tmp/k.py", "python", "@triton.jit\ndef k(): pass\n")
        .expect("src");
    let kernel = w
        .add_kernel(KernelDef {
            id: 0,
            name: "triton_poi_fused_add_0".into(),
            backend: "triton".into(),
            args: vec![
                ArgDef {
                    name: "in_ptr0".into(),
                    ty: "*fp32".into(),
                    access: Access::In,
                },
                ArgDef {
                    name: "out_ptr0".into(),
                    ty: "*fp32".into(),
                    access: Access::Out,
                },
                ArgDef {
                    name: "xnumel".into(),
                    ty: "i32".into(),
                    access: Access::In,
                },
            ],
            source: Some(src),
            meta: BTreeMap::new(),
            config: BTreeMap::from([("XBLOCK".into(), Scalar::Int(1024))]),
        })
        .expect("kernel");
    let a = w
        .layout("float32", 4, &[16, 64], &[64, 1], 0)
        .expect("layout");
    for seq in 0..3u64 {
        w.launch(&LaunchRecord {
            seq,
            kernel,
            grid: vec![1, 1, 1],
            stream: 0x7f00_1234_5678,
            device: 0,
            thread: 4242,
            ts: 1000 * seq,
            autotune: false,
            captured: None,
            module: (seq == 2).then(|| "layers.1".to_owned()),
            args: vec![
                ArgValue::Tensor(TensorArg {
                    layout: a,
                    ptr: 0x7f00_0000_0000,
                    flags: 0,
                    pre: Some(11),
                    post: Some(11),
                    stats: None,
                    samples: None,
                    rows: None,
                }),
                ArgValue::Tensor(TensorArg {
                    layout: a,
                    ptr: 0x7f00_0001_0000,
                    flags: 1,
                    pre: Some(12),
                    post: Some(13 + seq),
                    // The last launch's output carries samples, the others none.
                    stats: (seq == 2).then_some(Stats {
                        min: -1.0,
                        max: 2.0,
                        mean_abs: 0.5,
                        nan: 0,
                        inf: 0,
                    }),
                    samples: (seq == 2).then(|| vec![0.25, -1.0, 2.0]),
                    // So do its rows, and launch 1's: one hash per index of
                    // the leading dimension.
                    rows: (seq >= 1).then(|| (0..16).map(|r| 100 * seq + r).collect()),
                }),
                ArgValue::Scalar(Scalar::Int(1024)),
            ],
        })
        .expect("launch");
    }
    w.finish(3000, "exit").expect("finish")
}

#[test]
fn a_complete_trace_loads_into_tables() {
    let trace = Trace::from_bytes(Path::new("t"), &sample_trace()).expect("load");
    assert_eq!(trace.launches.len(), 3);
    assert_eq!(trace.early_end, None);
    assert_eq!(trace.end.as_ref().map(|e| e.launches), Some(3));
    let launch = trace.launches[2];
    let kernel = trace.kernel_of(&launch);
    assert_eq!(kernel.name, "triton_poi_fused_add_0");
    assert!(
        trace
            .source_of(kernel)
            .expect("source")
            .text
            .contains("triton.jit")
    );
    let args: Vec<_> = trace.args_of(&launch).collect();
    match args[1] {
        tritontui_trace::ArgRef::Tensor(t) => {
            assert_eq!(t.post, Some(15));
            assert!(t.written);
            assert_eq!(t.samples, Some(&[0.25, -1.0, 2.0][..]));
            assert_eq!(t.stats.map(|s| s.max), Some(2.0));
            assert_eq!(t.layout.shape, vec![16, 64]);
            assert_eq!(
                t.byte_range(),
                (0x7f00_0001_0000, 0x7f00_0001_0000 + 16 * 64 * 4)
            );
        }
        other => panic!("expected a tensor, got {other:?}"),
    }
    assert_eq!(args[2], tritontui_trace::ArgRef::Scalar(&Scalar::Int(1024)));
}

#[test]
fn a_trace_cut_anywhere_after_its_header_loads_every_whole_record() {
    let bytes = sample_trace();
    let full = Trace::from_bytes(Path::new("t"), &bytes).expect("load");
    let (_, mut reader) = RecordReader::open(Path::new("t"), &bytes).expect("open");
    let header_len = reader.position() as usize;
    let mut launch_ends = Vec::new();
    while let Next::Record(_, record) = reader.next_record().expect("record") {
        if matches!(record, Record::Launch(_)) {
            launch_ends.push(reader.position() as usize);
        }
    }
    for cut in header_len..bytes.len() {
        let trace = Trace::from_bytes(Path::new("t"), &bytes[..cut]).expect("prefix loads");
        let whole = launch_ends.iter().filter(|&&end| end <= cut).count();
        assert_eq!(trace.launches.len(), whole, "cut at {cut}");
        assert_eq!(trace.launches[..], full.launches[..whole]);
        assert!(
            trace.early_end.is_some(),
            "cut at {cut} must say the trace ended early"
        );
    }
}

#[test]
fn bad_files_give_one_line_errors_naming_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let check = |name: &str, bytes: &[u8], expect: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        let err = Trace::open(&path).expect_err("must fail").to_string();
        assert!(err.starts_with(&path.display().to_string()), "{err}");
        assert!(err.contains(expect), "{err:?} should mention {expect:?}");
        assert!(!err.contains('\n'), "{err:?} is not one line");
    };
    check("empty.msgpack", b"", "empty");
    check("text.msgpack", b"hello world", "not a tritontui trace");
    let other = rmp_serde::to_vec_named(&Record::Header(Header {
        format: "something-else".into(),
        ..header()
    }))
    .expect("encode");
    check("other.msgpack", &other, "\"something-else\"");
    let newer = rmp_serde::to_vec_named(&Record::Header(Header {
        version: (2, 0),
        ..header()
    }))
    .expect("encode");
    check("newer.msgpack", &newer, "version 2.0 is newer");
    let mut garbage = sample_trace();
    let at = garbage.len() - 20;
    garbage.truncate(at);
    garbage.extend_from_slice(&[0xc1; 30]);
    check("garbage.msgpack", &garbage, "byte ");

    let missing = dir.path().join("missing.msgpack");
    let err = Trace::open(&missing).expect_err("missing").to_string();
    assert!(
        err.starts_with(&missing.display().to_string()) && err.contains("cannot read"),
        "{err}"
    );
}

#[test]
fn a_launch_of_an_undefined_kernel_is_reported_with_its_offset() {
    let mut w = TraceWriter::new(Vec::new(), &header()).expect("header");
    w.launch(&LaunchRecord {
        seq: 0,
        kernel: 9,
        grid: vec![],
        stream: 0,
        device: -1,
        thread: 1,
        ts: 0,
        autotune: false,
        captured: None,
        module: None,
        args: vec![],
    })
    .expect("launch");
    let bytes = w.finish(0, "exit").expect("finish");
    let err = Trace::from_bytes(Path::new("t.msgpack"), &bytes).expect_err("undefined kernel");
    match err {
        TraceError::Corrupt { offset, detail, .. } => {
            assert!(offset > 0);
            assert!(detail.contains("kernel 9"), "{detail}");
        }
        other => panic!("unexpected {other}"),
    }
}

/// A tensor argument of `layout` at `ptr` hashed `pre` on entry.
fn entered(layout: u64, ptr: u64, pre: u64) -> ArgValue {
    ArgValue::tensor(layout, ptr, 0, Some(pre), None)
}

/// A call of graph `graph` with `args` from input position `first` on,
/// just before launch 7.
fn call(graph: u64, first: u64, args: Vec<ArgValue>) -> Record {
    Record::Call(CallRecord {
        graph,
        before: 7,
        device: 0,
        first,
        args,
    })
}

#[test]
fn graph_calls_load_as_inputs_named_by_their_graph() {
    let mut w = TraceWriter::new(Vec::new(), &header()).expect("header");
    let layout = w.layout("float32", 4, &[8], &[1], 0).expect("layout");
    w.write(&Record::Graph(GraphDef {
        id: 5,
        key: "fabc".into(),
        inputs: vec!["primals_1".into(), "primals_2".into(), "primals_3".into()],
    }))
    .expect("graph");
    // A symbolic size between two tensors keeps its position.
    w.write(&call(
        5,
        0,
        vec![
            entered(layout, 0x1000, 1),
            ArgValue::Scalar(Scalar::Int(8)),
            entered(layout, 0x2000, 2),
        ],
    ))
    .expect("call");
    // A later chunk of a call, past the names the graph has.
    w.write(&call(5, 3, vec![entered(layout, 0x3000, 3)]))
        .expect("call");
    let bytes = w.finish(0, "exit").expect("finish");
    let trace = Trace::from_bytes(Path::new("t"), &bytes).expect("load");
    let seen: Vec<_> = trace
        .inputs
        .iter()
        .map(|i| (&*i.name, &*i.graph, i.before, i.ptr, i.hash))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("primals_1", "fabc", 7, 0x1000, Some(1)),
            ("primals_3", "fabc", 7, 0x2000, Some(2)),
            ("input3", "fabc", 7, 0x3000, Some(3)),
        ]
    );
    // One call, however many records its inputs took.
    let calls: Vec<_> = trace.calls.iter().map(|c| (&*c.graph, c.before)).collect();
    assert_eq!(calls, vec![("fabc", 7)]);
}

#[test]
fn a_call_without_tensor_inputs_is_still_a_call() {
    let mut w = TraceWriter::new(Vec::new(), &header()).expect("header");
    w.write(&Record::Graph(GraphDef {
        id: 2,
        key: "fnone".into(),
        inputs: vec!["arg0_1".into()],
    }))
    .expect("graph");
    w.write(&call(2, 0, vec![ArgValue::Scalar(Scalar::Int(3))]))
        .expect("call");
    let bytes = w.finish(0, "exit").expect("finish");
    let trace = Trace::from_bytes(Path::new("t"), &bytes).expect("load");
    assert!(trace.inputs.is_empty());
    let calls: Vec<_> = trace.calls.iter().map(|c| (&*c.graph, c.before)).collect();
    assert_eq!(calls, vec![("fnone", 7)]);
}

#[test]
fn a_call_whose_positions_run_past_the_largest_number_loads() {
    let mut w = TraceWriter::new(Vec::new(), &header()).expect("header");
    let layout = w.layout("float32", 4, &[8], &[1], 0).expect("layout");
    w.write(&Record::Graph(GraphDef {
        id: 0,
        key: "g".into(),
        inputs: vec![],
    }))
    .expect("graph");
    let args = vec![entered(layout, 0x10, 1), entered(layout, 0x20, 2)];
    w.write(&call(0, u64::MAX, args)).expect("call");
    let bytes = w.finish(0, "exit").expect("finish");
    let trace = Trace::from_bytes(Path::new("t"), &bytes).expect("load");
    assert_eq!(trace.inputs.len(), 2);
}

#[test]
fn a_call_of_an_undefined_graph_is_reported() {
    let mut w = TraceWriter::new(Vec::new(), &header()).expect("header");
    w.write(&call(2, 0, vec![])).expect("call");
    let bytes = w.finish(0, "exit").expect("finish");
    let err = Trace::from_bytes(Path::new("t.msgpack"), &bytes).expect_err("undefined graph");
    assert!(err.to_string().contains("graph 2"), "{err}");
}

#[test]
fn unknown_record_kinds_and_fields_are_skipped() {
    #[derive(serde::Serialize)]
    struct Future {
        r: &'static str,
        anything: Vec<u32>,
    }
    let stream = write_all(&[]);
    let (_, reader) = RecordReader::open(Path::new("t"), &stream).expect("open");
    let header_len = reader.position() as usize;
    let future = rmp_serde::to_vec_named(&Future {
        r: "gpu-counters",
        anything: vec![1, 2],
    })
    .expect("encode");
    // header, a record of a kind from a future version, end
    let bytes = [&stream[..header_len], &future, &stream[header_len..]].concat();
    let trace = Trace::from_bytes(Path::new("t"), &bytes).expect("load");
    assert_eq!(trace.unknown_records, 1);
    assert!(trace.end.is_some());
}

#[test]
fn launch_records_stay_small() {
    // Six realistic tensor arguments with device addresses and full hashes.
    let launch = LaunchRecord {
        seq: 123_456,
        kernel: 17,
        grid: vec![4096, 1, 1],
        stream: 0x5581_2345_6780,
        device: 0,
        thread: 1_234_567,
        ts: 12_345_678_901_234,
        autotune: false,
        captured: None,
        module: None,
        args: (0..6)
            .map(|i| {
                ArgValue::Tensor(TensorArg {
                    layout: 3,
                    ptr: 0x7f3a_1000_0000 + i * 0x100_0000,
                    flags: u64::from(i == 5),
                    pre: Some(0x9e37_79b9_7f4a_7c15 ^ i),
                    post: Some(0xc2b2_ae3d_27d4_eb4f ^ i),
                    stats: None,
                    samples: None,
                    rows: None,
                })
            })
            .collect(),
    };
    let bytes = rmp_serde::to_vec_named(&Record::Launch(launch)).expect("encode");
    assert!(
        bytes.len() <= 256,
        "a six-tensor launch takes {} bytes",
        bytes.len()
    );
}

#[test]
fn a_trace_without_end_record_says_so() {
    let mut bytes = sample_trace();
    // Drop the end record, keeping every launch whole.
    let (_, mut reader) = RecordReader::open(Path::new("t"), &bytes).expect("open");
    let mut last_start = 0;
    while let Next::Record(offset, _) = reader.next_record().expect("record") {
        last_start = offset as usize;
    }
    bytes.truncate(last_start);
    let trace = Trace::from_bytes(Path::new("t"), &bytes).expect("load");
    assert_eq!(trace.early_end, Some(EarlyEnd::NoEndRecord));
    assert_eq!(trace.launches.len(), 3);
}

/// A writer of a trace that inherits hashes, with graph 1 (one input)
/// and a kernel defined; the kernel's id.
fn inheriting_writer() -> (TraceWriter<Vec<u8>>, u64) {
    let mut inheriting = header();
    inheriting.options.inherited_hashes = true;
    let mut w = TraceWriter::new(Vec::new(), &inheriting).expect("header");
    let kernel = w
        .add_kernel(KernelDef {
            id: 0,
            name: "k".into(),
            backend: "triton".into(),
            args: Vec::new(),
            source: None,
            meta: BTreeMap::new(),
            config: BTreeMap::new(),
        })
        .expect("kernel");
    w.write(&Record::Graph(GraphDef {
        id: 1,
        key: "g".into(),
        inputs: vec!["x".into()],
    }))
    .expect("graph");
    (w, kernel)
}

/// Writes launch `seq` of `kernel` with `args`.
fn write_launch(w: &mut TraceWriter<Vec<u8>>, kernel: u64, seq: u64, args: Vec<ArgValue>) {
    w.launch(&LaunchRecord {
        seq,
        kernel,
        grid: vec![1],
        stream: 0,
        device: 0,
        thread: 1,
        ts: seq,
        autotune: false,
        captured: None,
        module: None,
        args,
    })
    .expect("launch")
}

/// Launch `index`'s tensor arguments as loaded: hash before, inherited, written.
fn loaded_tensors(trace: &Trace, index: usize) -> Vec<(Option<u64>, bool, bool)> {
    trace
        .args_of(&trace.launches[index])
        .filter_map(|a| match a {
            ArgRef::Tensor(t) => Some((t.pre, t.inherited, t.written)),
            ArgRef::Scalar(_) => None,
        })
        .collect()
}

#[test]
fn inherited_hashes_are_filled_in_from_the_data_flow() {
    let (mut w, kernel) = inheriting_writer();
    let rows = w.layout("float32", 4, &[8], &[1], 0).expect("layout");
    let half = w.layout("float32", 4, &[4], &[1], 0).expect("layout");
    let inherited = TensorArg::INHERITED;
    // Hashed on the call's entry: x at 0x100.
    w.write(&call(1, 0, vec![entered(rows, 0x100, 10)]))
        .expect("call");
    // Reads x (inherited from the entry) and writes y at 0x200.
    write_launch(
        &mut w,
        kernel,
        1,
        vec![
            ArgValue::tensor(rows, 0x100, inherited, None, Some(10)),
            ArgValue::tensor(rows, 0x200, TensorArg::WRITTEN, None, Some(20)),
        ],
    );
    // Reads y (inherited from launch 1), writes the first half of x
    // through another view, and reads x whole after that: not inherited,
    // a reader finds nothing (and a writer would not have set the flag).
    write_launch(
        &mut w,
        kernel,
        2,
        vec![
            ArgValue::tensor(rows, 0x200, inherited, None, Some(21)),
            ArgValue::tensor(half, 0x100, TensorArg::WRITTEN, None, Some(30)),
        ],
    );
    write_launch(
        &mut w,
        kernel,
        3,
        vec![ArgValue::tensor(rows, 0x100, inherited, None, Some(40))],
    );
    let bytes = w.finish(0, "exit").expect("finish");
    let trace = Trace::from_bytes(Path::new("t"), &bytes).expect("load");
    let args = |index| loaded_tensors(&trace, index);
    assert_eq!(args(0), vec![(Some(10), true, false), (None, false, true)]);
    // y's hash changed in launch 2 although it was only read: a write.
    assert_eq!(args(1), vec![(Some(20), true, true), (None, false, true)]);
    assert_eq!(args(2), vec![(None, true, false)]);
}

#[test]
fn inherited_hashes_are_filled_in_through_views_reading_the_same_bytes_in_order() {
    let (mut w, kernel) = inheriting_writer();
    // x: 8 floats at 0x100, entered as a 2 x 4 matrix.
    let matrix = w.layout("float32", 4, &[2, 4], &[4, 1], 0).expect("layout");
    let flat = w.layout("int32", 4, &[8], &[1], 0).expect("layout");
    let transposed = w.layout("float32", 4, &[4, 2], &[1, 4], 0).expect("layout");
    let inherited = TensorArg::INHERITED;
    w.write(&call(1, 0, vec![entered(matrix, 0x100, 10)]))
        .expect("call");
    // x read flat, as other elements: the same bytes in the same order;
    // then transposed: other logical bytes, which nothing hashed; then
    // flat again, after the transposed view was left known: not found.
    for (seq, layout, post) in [(1, flat, 10), (2, transposed, 11), (3, flat, 10)] {
        let x = ArgValue::tensor(layout, 0x100, inherited, None, Some(post));
        write_launch(&mut w, kernel, seq, vec![x]);
    }
    let bytes = w.finish(0, "exit").expect("finish");
    let trace = Trace::from_bytes(Path::new("t"), &bytes).expect("load");
    assert_eq!(loaded_tensors(&trace, 0), vec![(Some(10), true, false)]);
    assert_eq!(loaded_tensors(&trace, 1), vec![(None, true, false)]);
    assert_eq!(loaded_tensors(&trace, 2), vec![(None, true, false)]);
}

#[test]
fn results_load_with_their_names_and_the_hash_held_since_recording_began() {
    let mut w = TraceWriter::new(Vec::new(), &header()).expect("header");
    let matrix = w.layout("float32", 4, &[4, 4], &[4, 1], 0).expect("layout");
    let row = w.layout("float32", 4, &[16], &[1], 0).expect("layout");
    let tensor = |layout, ptr, hash| ArgValue::tensor(layout, ptr, 0, Some(hash), None);
    // Alive when recording began: a matrix at 4096 and one at 8192.
    w.write(&Record::Held(ResultsRecord {
        before: 0,
        device: 0,
        args: vec![tensor(matrix, 4096, 1), tensor(matrix, 8192, 2)],
        names: Vec::new(),
    }))
    .expect("held");
    w.write(&Record::Results(ResultsRecord {
        before: 0,
        device: 0,
        args: vec![
            tensor(matrix, 4096, 1),
            tensor(matrix, 8192, 3),
            // Another view of the same bytes, and the same view on another device.
            tensor(row, 4096, 1),
        ],
        names: vec!["0.weight".into(), "".into(), "0.weight.grad".into()],
    }))
    .expect("results");
    w.write(&Record::Results(ResultsRecord {
        before: 0,
        device: 1,
        args: vec![tensor(matrix, 4096, 1)],
        names: Vec::new(),
    }))
    .expect("results");
    let bytes = w.finish(0, "exit").expect("finish");
    let trace = Trace::from_bytes(Path::new("t"), &bytes).expect("load");
    assert_eq!(trace.held.len(), 2);
    let results = trace.results.expect("results");
    let seen: Vec<(Option<&str>, Option<u64>, bool)> = results
        .iter()
        .map(|t| (t.name.as_deref(), t.held_hash, t.unchanged_since_start()))
        .collect();
    assert_eq!(
        seen,
        [
            (Some("0.weight"), Some(1), true),
            (None, Some(2), false),
            (Some("0.weight.grad"), None, false),
            (None, None, false),
        ]
    );
}

#[test]
fn a_held_tensor_of_an_undefined_layout_is_reported() {
    let mut w = TraceWriter::new(Vec::new(), &header()).expect("header");
    w.write(&Record::Held(ResultsRecord {
        before: 0,
        device: 0,
        args: vec![ArgValue::tensor(77, 4096, 0, Some(1), None)],
        names: Vec::new(),
    }))
    .expect("held");
    let bytes = w.finish(0, "exit").expect("finish");
    let error = Trace::from_bytes(Path::new("t.msgpack"), &bytes)
        .expect_err("an undefined layout")
        .to_string();
    assert!(
        error.contains("a held tensor refers to layout 77, which is not defined before it"),
        "{error}"
    );
}

#[test]
fn only_the_launch_that_took_samples_has_them() {
    let trace = Trace::from_bytes(Path::new("t"), &sample_trace()).expect("load");
    let samples = |i: usize| match trace.args_of(&trace.launches[i]).nth(1) {
        Some(tritontui_trace::ArgRef::Tensor(t)) => t.samples.map(<[f64]>::to_vec),
        other => panic!("expected a tensor, got {other:?}"),
    };
    assert_eq!(samples(0), None);
    assert_eq!(samples(1), None);
    assert_eq!(samples(2), Some(vec![0.25, -1.0, 2.0]));
    // So is the module path the recorder takes with them.
    assert_eq!(trace.module_of(&trace.launches[2]), Some("layers.1"));
    assert_eq!(trace.module_of(&trace.launches[1]), None);
}

#[test]
fn each_launch_keeps_its_own_row_hashes() {
    let trace = Trace::from_bytes(Path::new("t"), &sample_trace()).expect("load");
    let rows = |i: usize, arg: usize| match trace.args_of(&trace.launches[i]).nth(arg) {
        Some(tritontui_trace::ArgRef::Tensor(t)) => t.rows.map(<[u64]>::to_vec),
        other => panic!("expected a tensor, got {other:?}"),
    };
    assert_eq!(rows(0, 1), None);
    assert_eq!(rows(1, 1), Some((100..116).collect()));
    assert_eq!(rows(2, 1), Some((200..216).collect()));
    assert_eq!(rows(2, 0), None);
}

#[test]
fn row_hashes_of_a_launch_not_just_written_are_an_error_naming_it() {
    let mut bytes = sample_trace();
    let stray = tritontui_trace::format::RowsRecord {
        seq: 7,
        args: vec![(1, vec![1])],
    };
    rmp_serde::encode::write_named(&mut bytes, &Record::Rows(stray)).expect("encode");
    let error = Trace::from_bytes(Path::new("t"), &bytes).expect_err("a stray rows record");
    assert!(
        error.to_string().contains("row hashes of launch 7"),
        "{error}"
    );
}

#[test]
fn samples_of_a_launch_not_just_written_are_an_error_naming_it() {
    let mut bytes = sample_trace();
    // A samples record for launch 7 after the end: it follows no launch 7.
    let stray = tritontui_trace::format::SamplesRecord {
        seq: 7,
        args: vec![(1, vec![1.0])],
    };
    rmp_serde::encode::write_named(&mut bytes, &Record::Samples(stray)).expect("encode");
    let error = Trace::from_bytes(Path::new("t"), &bytes).expect_err("a stray samples record");
    assert!(error.to_string().contains("samples of launch 7"), "{error}");
}

//! The byte-level example in docs/trace-format.md is what the writer writes.

use tritontui_trace::{ArgValue, LaunchRecord, Scalar, TensorArg, TraceWriter};

fn documented_launch_bytes() -> Vec<u8> {
    let doc = include_str!("../../docs/trace-format.md");
    let start = doc.find("byte for byte").expect("example paragraph");
    let block = &doc[start..];
    let open = block.find("```text\n").expect("hex block") + "```text\n".len();
    let close = open + block[open..].find("```").expect("end of hex block");
    block[open..close]
        .split_whitespace()
        .map(|h| u8::from_str_radix(h, 16).expect("hex byte"))
        .collect()
}

#[test]
fn the_documented_launch_record_is_byte_exact() {
    let launch = LaunchRecord {
        seq: 0,
        kernel: 0,
        grid: vec![1, 1, 1],
        stream: 0,
        device: 0,
        thread: 4242,
        ts: 5000,
        autotune: false,
        captured: None,
        module: None,
        args: vec![
            ArgValue::Tensor(TensorArg {
                layout: 0,
                ptr: 0x7f00_0000_0000,
                flags: 0,
                pre: Some(11),
                post: Some(11),
                stats: None,
                samples: None,
                rows: None,
            }),
            ArgValue::Tensor(TensorArg {
                layout: 0,
                ptr: 0x7f00_0000_1000,
                flags: 1,
                pre: Some(0),
                post: Some(13),
                stats: None,
                samples: None,
                rows: None,
            }),
            ArgValue::Scalar(Scalar::Int(1024)),
        ],
    };
    let mut writer =
        TraceWriter::new(Vec::new(), &tritontui_trace::Header::new("x")).expect("header");
    let mut alone = Vec::new();
    rmp_serde::encode::write_named(&mut alone, &tritontui_trace::Record::Launch(launch.clone()))
        .expect("encode");
    writer.launch(&launch).expect("launch");
    let all = writer.finish(0, "exit").expect("finish");
    // The writer's own bytes contain exactly the documented record.
    let documented = documented_launch_bytes();
    assert_eq!(
        alone, documented,
        "docs/trace-format.md disagrees with the encoder"
    );
    assert_eq!(documented.len(), 74, "the document says 74 bytes");
    assert!(
        all.windows(documented.len())
            .any(|w| w == documented.as_slice()),
        "TraceWriter::launch writes different bytes"
    );
}

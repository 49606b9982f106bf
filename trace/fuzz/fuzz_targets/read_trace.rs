//! Feeds arbitrary bytes to the trace reader: it must return a trace or an
//! error, never panic, hang or overflow.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;
use tritontui_trace::{ArgRef, Trace};

fuzz_target!(|data: &[u8]| {
    if let Ok(trace) = Trace::from_bytes(Path::new("fuzz.msgpack"), data) {
        // Walk everything the loader built, as the engine would.
        for launch in &trace.launches {
            let kernel = trace.kernel_of(launch);
            let _ = trace.source_of(kernel);
            for arg in trace.args_of(launch) {
                if let ArgRef::Tensor(t) = arg {
                    let _ = t.byte_range();
                }
            }
        }
    }
});

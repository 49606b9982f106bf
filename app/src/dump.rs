//! `tritontui dump`: a trace as JSON Lines, one object per record, for
//! scripts, tests and `jq`. Addresses and hashes are hex strings, because
//! JSON readers lose integers above 2^53.

use serde_json::{Value, json};
use std::io::{self, Write};
use tritontui_trace::{ArgRef, Scalar, Trace};

fn hex(v: u64) -> String {
    format!("0x{v:016x}")
}

fn scalar(v: &Scalar) -> Value {
    match v {
        Scalar::None => Value::Null,
        Scalar::Bool(b) => json!(b),
        Scalar::Int(i) => json!(i),
        Scalar::UInt(u) => json!(u),
        Scalar::Float(f) => json!(f),
        Scalar::Str(s) => json!(s),
    }
}

/// Writes every record of `trace` to `out` as JSON Lines.
pub fn dump(trace: &Trace, out: &mut impl Write) -> io::Result<()> {
    let mut line = |value: Value| -> io::Result<()> {
        serde_json::to_writer(&mut *out, &value)?;
        out.write_all(b"\n")
    };
    let h = &trace.header;
    line(json!({
        "type": "header", "tool": h.tool, "version": [h.version.0, h.version.1], "created_ns": h.created_ns,
        "host": h.host, "pid": h.pid, "argv": h.argv, "torch": h.torch, "triton": h.triton, "cuda": h.cuda,
        "devices": h.devices, "options": {
            "hash": h.options.hash, "hash_inputs": h.options.hash_inputs, "hash_outputs": h.options.hash_outputs,
            "stats": h.options.stats, "samples": h.options.samples, "rows": h.options.rows, "aten": h.options.aten, "kernels": h.options.kernels,
            "cuda_graphs_disabled": h.options.cuda_graphs_disabled,
            "inherited_hashes": h.options.inherited_hashes,
            "fingerprint": h.options.fingerprint, "from_step": h.options.from_step,
            "to_step": h.options.to_step,
        },
        "distributed": h.distributed, "settings": h.settings,
    }))?;
    for p in &trace.processes {
        line(
            json!({"type": "process", "pid": p.pid, "ppid": p.ppid, "role": p.role, "host": p.host, "cmdline": p.cmdline}),
        )?;
    }
    for (i, k) in trace.kernels.iter().enumerate() {
        let source = trace.source_of(k).map(|s| s.path.clone());
        line(json!({
            "type": "kernel", "index": i, "name": k.name, "backend": k.backend, "source": source,
            "args": k.args.iter().map(|a| json!({"name": a.name, "type": a.ty, "access": a.access.as_str()})).collect::<Vec<_>>(),
            "meta": k.meta.iter().map(|(key, v)| (key.clone(), scalar(v))).collect::<serde_json::Map<_, _>>(),
            "config": k.config.iter().map(|(key, v)| (key.clone(), scalar(v))).collect::<serde_json::Map<_, _>>(),
        }))?;
    }
    for input in &trace.inputs {
        let layout = &trace.layouts[input.layout as usize];
        line(json!({
            "type": "input", "name": &*input.name, "graph": &*input.graph, "before": input.before, "device": input.device,
            "dtype": layout.dtype, "shape": layout.shape, "stride": layout.stride, "ptr": hex(input.ptr),
            "hash": input.hash.map(hex),
        }))?;
    }
    for (index, launch) in trace.launches.iter().enumerate() {
        let kernel = trace.kernel_of(launch);
        let args: Vec<Value> = trace
            .args_of(launch)
            .enumerate()
            .map(|(i, arg)| {
                let name = kernel.arg_name(i);
                let io = kernel.access_of(i).as_str();
                match arg {
                    ArgRef::Scalar(v) => json!({"name": name, "access": io, "value": scalar(v)}),
                    ArgRef::Tensor(t) => with_custom_hash(trace, launch.seq, i, json!({
                        "name": name, "access": io, "dtype": t.layout.dtype, "shape": t.layout.shape,
                        "stride": t.layout.stride, "ptr": hex(t.ptr), "written": t.written, "allocated": t.allocated, "inherited": t.inherited,
                        "pre": t.pre.map(hex), "post": t.post.map(hex),
                        "stats": t.stats.map(|s| json!({
                            "min": s.min, "max": s.max, "mean_abs": s.mean_abs, "nan": s.nan, "inf": s.inf,
                            "norm": l1_norm(&s, t.layout.shape.iter().product()),
                        })),
                        "samples": t.samples,
                        "rows": t.rows.map(|rows| rows.iter().map(|&h| hex(h)).collect::<Vec<_>>()),
                    })),
                }
            })
            .collect();
        let replay = trace
            .replay_of(launch)
            .map(|r| json!({"graph": r.graph, "n": r.n}));
        line(json!({
            "type": "launch", "seq": launch.seq, "kernel": kernel.name, "backend": kernel.backend,
            "grid": launch.grid(), "stream": hex(launch.stream), "device": launch.device, "thread": launch.thread,
            "ts": launch.ts, "autotune": launch.autotune, "replay": replay,
            "module": trace.module_of(launch), "step": trace.steps.of(index),
            "fingerprint": trace.steps.is_fingerprint(index), "args": args,
        }))?;
    }
    for g in &trace.cuda_graphs {
        line(json!({
            "type": "cuda_graph", "graph": g.graph, "launches": g.launches, "slots": g.slots,
            "device": g.device, "stream": hex(g.stream), "missing": g.missing, "pool": g.pool,
            "bytes": g.bytes, "hash_kernels": g.hash_kernels, "ts": g.ts,
        }))?;
    }
    for r in &trace.replays {
        line(json!({
            "type": "replay", "graph": r.graph, "n": r.n, "launches": r.launches, "hashed": r.hashed,
        }))?;
    }
    for g in &trace.process_groups {
        line(json!({
            "type": "process_group", "name": g.name, "desc": g.desc, "backend": g.backend,
            "ranks": g.ranks, "ts": g.ts,
        }))?;
    }
    for c in &trace.captured_values {
        line(json!({
            "type": "capture", "seq": c.seq, "file": c.file, "bytes": c.bytes, "ts": c.ts,
        }))?;
    }
    for m in &trace.markers {
        line(json!({"type": "marker", "label": m.label, "after": m.after, "ts": m.ts}))?;
    }
    for s in &trace.steps.records {
        line(json!({"type": "step", "step": s.step, "after": s.after, "by": s.by, "ts": s.ts}))?;
    }
    for p in &trace.pauses {
        line(json!({
            "type": "pause", "state": p.state, "pid": p.pid, "host": p.host, "launch": p.launch,
            "kernel": p.kernel, "resume_file": p.resume_file, "by": p.by, "ts": p.ts,
        }))?;
    }
    for c in &trace.compiles {
        let info: serde_json::Map<String, Value> =
            c.info.iter().map(|(k, v)| (k.clone(), scalar(v))).collect();
        line(json!({
            "type": "compile", "event": c.event, "name": c.name, "pid": c.pid, "ts": c.ts,
            "dur_ns": c.dur_ns, "info": info,
        }))?;
    }
    for c in &trace.settings_changes {
        line(json!({"type": "settings", "before": c.before, "values": c.values, "ts": c.ts}))?;
    }
    for g in &trace.gaps {
        line(json!({
            "type": "gap", "what": g.what, "detail": g.detail, "before": g.before, "ts": g.ts,
        }))?;
    }
    for live in &trace.held {
        let layout = &trace.layouts[live.layout as usize];
        line(json!({
            "type": "held", "device": live.device, "dtype": layout.dtype, "shape": layout.shape,
            "stride": layout.stride, "ptr": hex(live.ptr), "hash": live.hash.map(hex),
        }))?;
    }
    for live in trace.results.iter().flatten() {
        let layout = &trace.layouts[live.layout as usize];
        line(json!({
            "type": "result", "device": live.device, "dtype": layout.dtype, "shape": layout.shape,
            "stride": layout.stride, "ptr": hex(live.ptr), "hash": live.hash.map(hex),
            "name": live.name.as_deref(), "held_hash": live.held_hash.map(hex),
        }))?;
    }
    line(json!({
        "type": "end", "complete": trace.early_end.is_none(),
        "ended_early": trace.early_end.map(|e| e.to_string()),
        "reason": trace.end.as_ref().map(|e| e.reason.clone()),
        "launches": trace.launches.len(), "unknown_records": trace.unknown_records,
    }))
}

/// The L1 norm DebugMode's `log_tensor_hashes` compares (`norm_hash_fn`:
/// the sum of |x| in float64), from a tensor's statistics: None (null)
/// when an element is NaN or infinite, where that norm is NaN or inf.
fn l1_norm(stats: &tritontui_trace::format::Stats, numel: u64) -> Option<f64> {
    (stats.nan == 0 && stats.inf == 0).then_some(stats.mean_abs * numel as f64)
}

/// A tensor argument's JSON with what the program's own hash function
/// gave for it, when it ran (`custom_hash`: `fn`, `pre`, `post`).
fn with_custom_hash(trace: &Trace, seq: u64, arg: usize, mut tensor: Value) -> Value {
    if let (Some((function, pre, post)), Some(map)) =
        (trace.custom_hash(seq, arg), tensor.as_object_mut())
    {
        map.insert(
            "custom_hash".into(),
            json!({"fn": function, "pre": scalar(pre), "post": scalar(post)}),
        );
    }
    tensor
}

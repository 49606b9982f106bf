//! Where in the program's `nn.Module`s a launch computed what it wrote:
//! an eager op's own module (the launch's `m`, 1.18), or the modules of
//! the ops a compiled kernel fused into an output argument, from the
//! `kernel_site` compile records the recorder takes from Inductor's code
//! generation (1.19): one record per call site of a graph's wrapper, in the
//! order the wrapper launches them, with the aten ops each computes. An
//! extern kernel's site (1.20) is named by its op's packet (`aten::mm`),
//! which its launches (`aten::mm.out`) are matched by.

use super::{Launch, Trace};
use crate::format::{CompileRecord, Scalar};
use rustc_hash::FxHashMap;

/// The compile event naming one call site of a generated kernel.
const KERNEL_SITE: &str = "kernel_site";
/// Joins the module paths in a `kernel_site` record (a path has none).
const SEPARATOR: char = ';';

impl Trace {
    /// The `nn.Module` path launch `launch` ran in (`layers.1.mlp`; empty
    /// for the outermost module), when recorded (1.18).
    pub fn module_of(&self, launch: &Launch) -> Option<&str> {
        launch
            .module
            .and_then(|at| self.modules.get(at as usize))
            .map(String::as_str)
    }

    /// The module paths argument `arg` of launch `index` was computed in,
    /// the one whose op wrote it last at the end: an eager op's module, or
    /// the modules of the ops a compiled kernel fused into that argument
    /// (into the whole kernel where the argument's own are not known).
    /// Empty where the trace does not say.
    pub fn modules_of(&self, index: usize, arg: &str) -> Vec<&str> {
        let launch = &self.launches[index];
        if let Some(module) = self.module_of(launch) {
            return vec![module];
        }
        let Some(site) = self.site_of(index) else {
            return Vec::new();
        };
        let text = |key: &str| match site.info.get(key) {
            Some(Scalar::Str(s)) => Some(s.as_str()),
            _ => None,
        };
        text(&format!("arg.{arg}"))
            .or_else(|| text("modules").filter(|s| !s.is_empty()))
            .map_or_else(Vec::new, |paths| paths.split(SEPARATOR).collect())
    }

    /// The aten ops a compiled kernel's launch computes, each with the
    /// module it was traced in (`("layers.1", "aten.gelu")`), in the
    /// graph's order, from its compile; empty for an eager op, or where
    /// the trace does not say.
    pub fn fused_ops(&self, index: usize) -> Vec<(&str, &str)> {
        let Some(Scalar::Str(ops)) = self.site_of(index).and_then(|s| s.info.get("ops")) else {
            return Vec::new();
        };
        ops.split(SEPARATOR)
            .filter_map(|pair| pair.split_once('='))
            .collect()
    }

    /// The `kernel_site` record of launch `index`, from the index built
    /// at the first question ([`site_index`]).
    fn site_of(&self, index: usize) -> Option<&CompileRecord> {
        let index = u32::try_from(index).ok()?;
        let at = *self.sites.get_or_init(|| site_index(self)).get(&index)?;
        self.compiles.get(at as usize)
    }
}

/// Each program launch's `kernel_site` record (launch index to index into
/// `compiles`): a launch's graph is that of the last graph call before
/// it, and it is that graph's n-th call site of its kernel when n
/// launches of that kernel came since the call (an aten op's launch: of
/// its packet, where the graph has no site of its overload).
fn site_index(trace: &Trace) -> FxHashMap<u32, u32> {
    // Each graph's sites of each kernel, in order.
    let mut sites: FxHashMap<(&str, &str), Vec<u32>> = FxHashMap::default();
    for (at, c) in trace.compiles.iter().enumerate() {
        if let (KERNEL_SITE, Some(Scalar::Str(graph))) = (c.event.as_str(), c.info.get("graph")) {
            let at = u32::try_from(at).unwrap_or(u32::MAX);
            sites
                .entry((graph.as_str(), c.name.as_str()))
                .or_default()
                .push(at);
        }
    }
    let mut index = FxHashMap::default();
    if sites.is_empty() {
        return index;
    }
    for (k, call) in trace.calls.iter().enumerate() {
        let end = trace.calls.get(k + 1).map_or(u64::MAX, |next| next.before);
        let first = trace.launches.partition_point(|l| l.seq < call.before);
        let mut seen: FxHashMap<&str, usize> = FxHashMap::default();
        for (i, l) in trace.launches.iter().enumerate().skip(first) {
            if l.seq >= end {
                break;
            }
            if l.autotune {
                continue;
            }
            let kernel = trace.kernels[l.kernel as usize].name.as_str();
            let Some((name, of_kernel)) = [Some(kernel), packet(kernel)]
                .into_iter()
                .flatten()
                .find_map(|name| Some((name, sites.get(&(&*call.graph, name))?)))
            else {
                continue;
            };
            let n = seen.entry(name).or_default();
            if let (Some(&at), Ok(i)) = (of_kernel.get(*n), u32::try_from(i)) {
                index.insert(i, at);
            }
            *n += 1;
        }
    }
    index
}

/// `aten::mm` for the op overload `aten::mm.out`; None for a name with
/// no overload (`aten::mm`, a generated kernel's).
fn packet(name: &str) -> Option<&str> {
    let (namespace, op) = name.split_once("::")?;
    let (packet, _) = op.rsplit_once('.')?;
    Some(&name[..namespace.len() + 2 + packet.len()])
}

#[cfg(test)]
mod tests {
    use crate::TraceWriter;
    use crate::format::{
        ArgValue, CallRecord, CompileRecord, GraphDef, Header, KernelDef, LaunchRecord, Record,
        Scalar,
    };
    use crate::trace::Trace;
    use std::collections::BTreeMap;
    use std::path::Path;

    fn site(kernel: &str, graph: &str, modules: &str, args: &[(&str, &str)]) -> Record {
        let mut info = BTreeMap::new();
        info.insert("graph".to_owned(), Scalar::Str(graph.into()));
        info.insert("modules".to_owned(), Scalar::Str(modules.into()));
        let ops = modules.split(';').map(|m| format!("{m}=aten.add"));
        info.insert(
            "ops".to_owned(),
            Scalar::Str(ops.collect::<Vec<_>>().join(";")),
        );
        for (arg, paths) in args {
            info.insert(format!("arg.{arg}"), Scalar::Str((*paths).into()));
        }
        Record::Compile(CompileRecord {
            event: super::KERNEL_SITE.into(),
            name: kernel.into(),
            pid: 1,
            ts: 0,
            dur_ns: 0,
            info,
        })
    }

    /// Graph `g` called before launch 0: its kernel `cpp_fused_0` launched
    /// twice (two call sites, in blocks 0 and 1), then its extern kernel
    /// (`aten::mm.out`, whose site names the packet `aten::mm`), then the
    /// graph called again for one.
    fn trace() -> Trace {
        let mut w = TraceWriter::new(Vec::new(), &Header::new("test")).expect("header");
        let kernel = |id: u64, name: &str| {
            Record::Kernel(KernelDef {
                id,
                name: name.into(),
                backend: "cpp".into(),
                args: vec![],
                source: None,
                meta: BTreeMap::new(),
                config: BTreeMap::new(),
            })
        };
        let launch = |seq: u64, kernel: u64| {
            Record::Launch(LaunchRecord {
                seq,
                kernel,
                grid: vec![],
                stream: 0,
                device: -1,
                thread: 0,
                ts: 0,
                autotune: false,
                args: vec![],
                captured: None,
                module: None,
            })
        };
        let call = |before: u64| {
            Record::Call(CallRecord {
                graph: 7,
                before,
                device: -1,
                first: 0,
                args: vec![ArgValue::Scalar(Scalar::Int(1))],
            })
        };
        for record in [
            kernel(1, "cpp_fused_0"),
            kernel(2, "aten::mm.out"),
            site("aten::mm", "g", "0.fc", &[]),
            site("cpp_fused_0", "g", "0;0.norm", &[("out_ptr0", "0.norm")]),
            site("cpp_fused_0", "g", "0;1.norm", &[("out_ptr0", ";1.norm")]),
            site("cpp_fused_0", "other", "2", &[]),
            Record::Graph(GraphDef {
                id: 7,
                key: "g".into(),
                inputs: vec![],
            }),
            call(0),
            launch(0, 1),
            launch(1, 1),
            launch(2, 2),
            // The graph called again: its sites count from the first.
            call(3),
            launch(3, 1),
        ] {
            w.write(&record).expect("write");
        }
        let bytes = w.finish(0, "done").expect("finish");
        Trace::from_bytes(Path::new("t"), &bytes).expect("load")
    }

    #[test]
    fn each_launch_of_a_kernel_takes_its_own_call_site() {
        let t = trace();
        assert_eq!(t.modules_of(0, "out_ptr0"), vec!["0.norm"]);
        assert_eq!(t.modules_of(1, "out_ptr0"), vec!["", "1.norm"]);
        assert_eq!(t.modules_of(2, "out"), vec!["0.fc"]);
        assert_eq!(t.modules_of(3, "out_ptr0"), vec!["0.norm"]);
        // An argument without its own falls back to the kernel's.
        assert_eq!(t.modules_of(1, "out_ptr1"), vec!["0", "1.norm"]);
        assert_eq!(
            t.fused_ops(1),
            vec![("0", "aten.add"), ("1.norm", "aten.add")]
        );
    }

    #[test]
    fn an_op_s_packet_is_its_name_without_the_overload() {
        assert_eq!(super::packet("aten::mm.out"), Some("aten::mm"));
        assert_eq!(super::packet("aten::add.Tensor"), Some("aten::add"));
        assert_eq!(super::packet("aten::mm"), None);
        assert_eq!(super::packet("cpp_fused_add_0"), None);
    }
}

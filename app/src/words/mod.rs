//! Every sentence the outputs say about a comparison (the TUI, the
//! summary, the HTML page and the JSON's `detail`): what differs, and why
//! the engine thinks so. The engine gives facts; the words are made here.

pub mod accuracy;
pub mod autotuning;
pub mod batch;
pub mod fingerprints;
mod gaps;

pub use gaps::{gap, unseen_work};
use tritontui_engine::TracePair;
use tritontui_engine::analysis::{Analysis, Divergence, Impact, InputOrigin, Kind, Overwrite};
use tritontui_engine::compile_events::CompileDifference;
use tritontui_engine::producer::Origin;
use tritontui_engine::programs::ProgramDifferences;
use tritontui_engine::settings::SettingDiff;
use tritontui_engine::suspects::uses_atomics;
use tritontui_trace::{ArgIndex, ArgRef, Scalar, Trace};

/// What an argument read whose bytes launch `l` handed out through its
/// argument `arg` and nothing wrote since.
pub fn uninitialized_words(trace: &Trace, l: u32, arg: ArgIndex) -> String {
    let launch = &trace.launches[l as usize];
    let kernel = trace.kernel_of(launch);
    if kernel.is_allocation() {
        format!(
            "uninitialized memory: allocated by launch #{} {} and not written before this launch",
            launch.seq, kernel.name
        )
    } else {
        format!(
            "uninitialized output, never written: launch #{} {} returns {} without writing it",
            launch.seq,
            kernel.name,
            kernel.arg_name(usize::from(arg))
        )
    }
}

/// A sentence saying where a differing input of divergence `d` came from.
pub fn origin_words(
    runs: TracePair<'_>,
    d: &Divergence,
    origin: &InputOrigin,
    analysis: &Analysis,
) -> String {
    let from = |trace: &Trace, o: Origin| -> String {
        match o {
            Origin::Launch(l, arg) => launch_words(trace, l, Some(arg)),
            Origin::GraphInput(i) => format!("graph input {}", trace.inputs[i as usize].name),
            Origin::Allocated(l, _) => {
                let launch = &trace.launches[l as usize];
                format!("launch #{} {}", launch.seq, trace.kernel_of(launch).name)
            }
            Origin::Unrecorded => "no recorded launch".to_owned(),
            Origin::Scalar => "a scalar".to_owned(),
        }
    };
    if origin.a == Origin::Scalar {
        return host_values(runs, d, origin.arg)
            .unwrap_or_else(|| "a scalar argument, passed by the host".to_owned());
    }
    if let (Some(up), false) = (origin.explained_by, origin.same_outside_value) {
        let producer = &analysis.divergences[up];
        // The run whose writer is the diverging producer (the last writer,
        // or an earlier one whose bytes the input still holds).
        let wrote =
            |o: Origin, launch: Option<u32>| matches!(o, Origin::Launch(l, _) if Some(l) == launch);
        let (trace, o) = if wrote(origin.a, producer.a)
            || !wrote(origin.b, producer.b) && matches!(origin.a, Origin::Launch(..))
        {
            (runs.a, origin.a)
        } else {
            (runs.b, origin.b)
        };
        return format!(
            "written by {}, which diverges ({})",
            from(trace, o),
            producer.kind.as_str()
        );
    }
    if let Some(overwrite) = origin.overwrite {
        return overwrite_words(runs, origin, overwrite);
    }
    let mut words = match (origin.a, origin.b) {
        (Origin::Launch(..), _) => format!(
            "written by {}, whose output was the same in both runs: something outside the recorded region changed it afterwards",
            from(runs.a, origin.a)
        ),
        (Origin::Allocated(l, arg), _) => uninitialized_words(runs.a, l, arg),
        (Origin::GraphInput(_), _) => format!(
            "it is {}, which no recorded launch wrote: the runs were given different inputs",
            from(runs.a, origin.a)
        ),
        (_, Origin::GraphInput(_)) => format!(
            "in run B it is {}, which no recorded launch wrote: the runs were given different inputs",
            from(runs.b, origin.b)
        ),
        _ => {
            let unseen = unseen_work(&analysis.gaps.a, &analysis.gaps.b);
            if unseen.is_empty() {
                "no recorded launch wrote these bytes: uninitialized memory, or a write outside the recorded region"
                    .to_owned()
            } else {
                format!(
                    "no recorded launch wrote these bytes; what the traces did not see: {}",
                    unseen.join("; ")
                )
            }
        }
    };
    if let (Some(first), true) = (origin.explained_by, origin.same_outside_value) {
        let d = &analysis.divergences[first];
        if let Some(x) = d.a {
            words.push_str(&format!(
                "; first read by launch #{} {}",
                runs.seq_a(x),
                runs.kernel(d).name
            ));
        }
    }
    words
}

/// Where a launch ran, in words: `launch #12 triton_poi_0 (out_ptr0,
/// replay 2 of CUDA graph 1)`.
fn launch_words(trace: &Trace, index: u32, arg: Option<ArgIndex>) -> String {
    let launch = &trace.launches[index as usize];
    let kernel = trace.kernel_of(launch);
    let mut notes: Vec<String> = arg
        .map(|arg| kernel.arg_name(usize::from(arg)))
        .into_iter()
        .collect();
    if let Some(r) = trace.replay_of(launch) {
        notes.push(format!("replay {} of CUDA graph {}", r.n, r.graph));
    }
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join(", "))
    };
    format!("launch #{} {}{notes}", launch.seq, kernel.name)
}

/// An input one run read from a later write than the other run did.
fn overwrite_words(runs: TracePair<'_>, origin: &InputOrigin, overwrite: Overwrite) -> String {
    let (late, early, late_origin, early_origin) = if overwrite.in_a {
        (("A", runs.a), ("B", runs.b), origin.a, origin.b)
    } else {
        (("B", runs.b), ("A", runs.a), origin.b, origin.a)
    };
    let producer = |trace: &Trace, o: Origin| match o {
        Origin::Launch(l, arg) => launch_words(trace, l, Some(arg)),
        _ => "no recorded launch".to_owned(),
    };
    let by = producer(late.1, late_origin);
    let mut words = match overwrite.replaced {
        Some(replaced) => format!(
            "run {} read it after {by} had overwritten what {} wrote there; run {} read what \
             {} wrote, its counterpart: an output read after a later write replaced it",
            late.0,
            launch_words(late.1, replaced, None),
            early.0,
            producer(early.1, early_origin),
        ),
        None => format!(
            "run {} read what {by} wrote, run {} what {} wrote, an earlier launch that is not \
             its counterpart: each wrote what its counterpart wrote, and run {} read a later write",
            late.0,
            early.0,
            producer(early.1, early_origin),
            late.0,
        ),
    };
    let by_launch = &late.1.launches[overwrite.by as usize];
    let replaced = overwrite.replaced.map(|r| &late.1.launches[r as usize]);
    let in_replays = (
        late.1.replay_of(by_launch),
        replaced.and_then(|r| late.1.replay_of(r)),
    );
    match in_replays {
        (Some(by), Some(of)) if by.graph != of.graph => {
            let (by, of) = (by.graph, of.graph);
            if replaced.is_some_and(|r| late.1.share_a_pool(by_launch, r)) {
                words.push_str(&format!(
                    "; CUDA graphs {of} and {by} were captured from one memory pool: a replay \
                     of graph {by} writes where graph {of}'s outputs live"
                ));
            } else {
                words.push_str(&format!(
                    "; a replay of CUDA graph {by} wrote where graph {of}'s output was"
                ));
            }
        }
        (Some(_), _) => words.push_str(
            "; every replay of a CUDA graph writes the same buffers: clone an output that is \
             read after the next replay",
        ),
        _ => {}
    }
    words
}

/// One sentence: the verdict for this divergence in words.
pub fn divergence_words(runs: TracePair<'_>, analysis: &Analysis, d: &Divergence) -> String {
    let names = |args: &[ArgIndex]| -> String {
        args.iter()
            .map(|&a| runs.arg_name(d, a))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match d.kind {
        Kind::Structural => structural_words(runs, analysis, d),
        Kind::DivergentInput => {
            let mut words = format!(
                "{} before the launch",
                differ(&names(&d.args), d.args.len())
            );
            if d.absorbed {
                words.push_str(", yet every output agrees: the difference is absorbed here");
            }
            if let Some(first) = d.primary_origin() {
                words.push_str("; ");
                if d.origins.len() > 1 {
                    words.push_str(&format!("{}: ", runs.arg_name(d, first.arg)));
                }
                words.push_str(&origin_words(runs, d, first, analysis));
            }
            words
        }
        Kind::NondeterministicKernel => {
            let kernel = runs.kernel(d);
            // A conclusion needs a rerun of the kernel alone (`check`
            // makes one); a comparison of two runs only saw this much.
            let mut words = format!(
                "inputs equal, {} after the launch (unconfirmed by two runs: `tritontui check` reruns the kernel alone)",
                differ(&names(&d.args), d.args.len())
            );
            if uses_atomics(runs.a, kernel) {
                words.push_str("; it uses atomic adds");
            }
            words
        }
        Kind::Settings => {
            let (x, y) = (d.a.unwrap_or_default(), d.b.unwrap_or_default());
            let explaining = tritontui_engine::settings::Explaining::at(
                runs.a,
                runs.seq_a(x),
                runs.b,
                runs.seq_b(y),
                &runs.kernel(d).backend,
            );
            let mut why = Vec::new();
            if !explaining.numerics.is_empty() {
                why.push(format!(
                    "the numerics settings in force differ: {}",
                    setting_lines(&explaining.numerics).join(", ")
                ));
            }
            if !explaining.compiled.is_empty() {
                why.push(format!(
                    "it was compiled with other Inductor config: {}",
                    setting_lines(&explaining.compiled).join(", ")
                ));
            }
            // Inputs that differ only in scratch the kernel writes before
            // it reads (uninitialized in/out buffers).
            let scratch: Vec<String> = d.origins.iter().map(|o| runs.arg_name(d, o.arg)).collect();
            let inputs = match scratch.len() {
                0 => "inputs equal,".to_owned(),
                n => format!(
                    "inputs equal but for the old bytes of {}, uninitialized scratch the kernel writes before it reads;",
                    first_few(scratch.into_iter(), n)
                ),
            };
            format!(
                "{inputs} {} after the launch; {}",
                differ(&names(&d.args), d.args.len()),
                why.join("; ")
            )
        }
        Kind::Collective => format!(
            "inputs equal on this rank, {} after the collective: another rank sent different data; \
             compare the ranks' traces to find where it came from",
            differ(&names(&d.args), d.args.len())
        ),
        Kind::LaunchConfig => {
            let diff = d.diff.clone().unwrap_or_default();
            let mut what = Vec::new();
            if diff.config {
                what.push(config_words(runs, d));
            }
            if let (true, Some(x), Some(y)) = (diff.grid, d.a, d.b) {
                what.push(format!(
                    "grid {:?} vs {:?}",
                    runs.a.launches[x as usize].grid(),
                    runs.b.launches[y as usize].grid()
                ));
            }
            let mut words = format!(
                "inputs equal, launched differently ({}), {}: autotuning or heuristics chose differently",
                what.join("; "),
                outputs_differ(&names(&d.args), d.args.len())
            );
            if let (Some(x), Some(y)) = (d.a, d.b) {
                let ka = runs.a.kernel_of(&runs.a.launches[x as usize]);
                let kb = runs.b.kernel_of(&runs.b.launches[y as usize]);
                words.push_str(&format!(
                    "; {}; {}",
                    autotuning::words(&runs.a.compiles, "A", ka),
                    autotuning::words(&runs.b.compiles, "B", kb)
                ));
            }
            with_code_settings(runs, d, words)
        }
        Kind::Code => with_code_settings(
            runs,
            d,
            format!(
                "same kernel name, different source; inputs equal, {}",
                outputs_differ(&names(&d.args), d.args.len())
            ),
        ),
        // A launch pair never has these kinds: `result_words` and
        // `accuracy::past_bound_words` say them.
        Kind::Result => "a result differs".to_owned(),
        Kind::Accuracy => "the programs' numerics part past their bound".to_owned(),
        Kind::BatchVariant => "the request's rows depend on its batch".to_owned(),
    }
}

/// `float32[512, 32] on cuda:0`: a result tensor as a person names it.
pub fn result_name(trace: &Trace, t: &tritontui_trace::LiveTensor) -> String {
    let layout = &trace.layouts[t.layout as usize];
    let device = if t.device < 0 {
        "cpu".to_owned()
    } else {
        format!("cuda:{}", t.device)
    };
    format!("{}{:?} on {device}", layout.dtype, layout.shape)
}

/// One sentence: a differing result, and what last wrote it in each run.
pub fn result_words(
    runs: TracePair<'_>,
    analysis: &Analysis,
    r: &tritontui_engine::results::ResultDifference,
) -> String {
    let (Some(ra), Some(rb)) = (runs.a.results.as_deref(), runs.b.results.as_deref()) else {
        return "a result differs".to_owned();
    };
    let (ta, tb) = (&ra[r.a], &rb[r.b]);
    let hash = |h: Option<u64>| h.map_or("?".to_owned(), |h| format!("{h:016x}"));
    let named = ta
        .name
        .as_deref()
        .map_or(String::new(), |n| format!("{n} "));
    let mut words = format!(
        "the result {named}{} differs at the end ({} in A, {} in B)",
        result_name(runs.a, ta),
        hash(ta.hash),
        hash(tb.hash)
    );
    if let Some(up) = r.explained_by {
        let d = &analysis.divergences[up];
        let at = index_words(d.a.map(|x| runs.seq_a(x)), d.b.map(|y| runs.seq_b(y)));
        words.push_str(&format!(
            "; it holds what {at} {} wrote, which diverges ({})",
            runs.kernel(d).name,
            d.kind.as_str()
        ));
        return words;
    }
    let writer = |trace: &Trace, w: Option<tritontui_engine::producer::ResultWriter>| -> String {
        let Some(w) = w else {
            return "nothing shows what last wrote it".to_owned();
        };
        match w.origin {
            Origin::Launch(l, arg) => {
                let after = format!("{} last wrote it", launch_words(trace, l, Some(arg)));
                if w.holds == Some(false) {
                    format!("{after}, and something the trace did not record changed it since")
                } else {
                    format!(
                        "{after} the same in both runs: something the trace did not record changed it since"
                    )
                }
            }
            Origin::GraphInput(i) => {
                let input = &trace.inputs[i as usize];
                format!(
                    "it is graph input {} as it entered, and no recorded launch wrote it",
                    input.name
                )
            }
            Origin::Allocated(..) | Origin::Unrecorded | Origin::Scalar => {
                "no recorded launch wrote it".to_owned()
            }
        }
    };
    let (in_a, in_b) = (writer(runs.a, r.writer_a), writer(runs.b, r.writer_b));
    if in_a == in_b {
        words.push_str(&format!("; in both runs {in_a}"));
    } else {
        words.push_str(&format!("; in A {in_a}; in B {in_b}"));
    }
    let unseen = unseen_work(&analysis.gaps.a, &analysis.gaps.b);
    if unseen.is_empty() {
        words.push_str(": it was written outside the recorded region");
    } else {
        words.push_str(&format!(
            "; what the traces did not see: {}",
            unseen.join("; ")
        ));
    }
    words
}

/// What a host value argument held in each run, in words: the random
/// generator a random op draws from, or another value the host passed.
fn host_values(runs: TracePair<'_>, d: &Divergence, arg: ArgIndex) -> Option<String> {
    let value = |trace: &Trace, launch: Option<u32>| -> Option<String> {
        let launch = &trace.launches[launch? as usize];
        match trace.args_of(launch).nth(usize::from(arg))? {
            ArgRef::Scalar(Scalar::Str(text)) => Some(text.clone()),
            ArgRef::Scalar(other) => Some(other.to_string()),
            ArgRef::Tensor(_) => None,
        }
    };
    let (x, y) = (value(runs.a, d.a)?, value(runs.b, d.b)?);
    let generator =
        |v: &str| v.starts_with("<default generator") || v.starts_with("<torch.Generator");
    Some(if generator(&x) || generator(&y) {
        format!("the random-number generator it draws from differs: {x} in A, {y} in B")
    } else {
        format!("a scalar argument, passed by the host: {x} in A, {y} in B")
    })
}

/// `words`, then the Inductor config entries that differ between the
/// compiles that made the two kernels (where the traces say), and the
/// runs' other settings that can change generated code or its launch,
/// when any differ.
fn with_code_settings(runs: TracePair<'_>, d: &Divergence, mut words: String) -> String {
    let compiled = runs.compiles_differ(d);
    let mut differ = tritontui_engine::settings::affecting_code(&runs.a.header, &runs.b.header);
    if let Some(compiled) = &compiled {
        // What each graph compiled with says more than the config at start.
        differ.retain(|s| !s.name.starts_with("inductor."));
        if !compiled.is_empty() {
            words.push_str(&format!(
                "; the compiles that made these kernels differ: {}",
                setting_lines(compiled).join(", ")
            ));
        }
    }
    if !differ.is_empty() {
        words.push_str(&format!(
            "; the runs' settings differ: {}",
            setting_lines(&differ).join(", ")
        ));
    }
    words
}

/// Where a divergence's difference ends: in the results, or absorbed on
/// the way (and by which launches).
pub fn impact_words(runs: TracePair<'_>, analysis: &Analysis, index: usize) -> String {
    let d = &analysis.divergences[index];
    match &d.impact {
        Impact::Reaches => "reaches the results".to_owned(),
        Impact::Unseen => {
            // A run that raised never ran what follows; one whose trace
            // was cut may have.
            let raised = tritontui_engine::analysis::cut_short(runs.a, runs.b, &analysis.alignment, d)
                .filter(|(_, trace)| trace.early_end.is_none())
                .and_then(|(name, trace)| Some((name, trace.raised()?)));
            match raised {
                Some((name, raised)) => {
                    format!("not run in {name}: its program raised {raised} before these launches")
                }
                None => "unseen: the other run's trace ended before these launches, so whether they differ is not known"
                    .to_owned(),
            }
        }
        Impact::Uncompared => {
            "uncompared: what it wrote survives only in results the other run does not have (such as a CUDA graph's static buffers)"
                .to_owned()
        }
        Impact::Absorbed(_) if d.absorbed => "absorbed here: every output agrees".to_owned(),
        Impact::Absorbed(by) if by.is_empty() => {
            "absorbed: its differing bytes were overwritten or freed before they reached the results, or hold what the other run's results hold"
                .to_owned()
        }
        Impact::Absorbed(by) => {
            let names = by.iter().map(|&i| {
                let absorber = &analysis.divergences[i];
                let seq = absorber.a.map_or(String::from("-"), |x| runs.seq_a(x).to_string());
                format!("A#{seq} {}", runs.kernel(absorber).name)
            });
            format!(
                "absorbed by {}, whose outputs agree",
                first_few(names, by.len())
            )
        }
    }
}

/// "x differs" or "x, y differ".
pub fn differ(names: &str, count: usize) -> String {
    if count == 1 {
        format!("{names} differs")
    } else {
        format!("{names} differ")
    }
}

/// Like [`differ`], for outputs that may not have been hashed.
fn outputs_differ(names: &str, count: usize) -> String {
    if count == 0 {
        "its outputs were not hashed, so they may differ".to_owned()
    } else {
        differ(names, count)
    }
}

fn config_words(runs: TracePair<'_>, d: &Divergence) -> String {
    let (Some(x), Some(y)) = (d.a, d.b) else {
        return "config differs".to_owned();
    };
    let ka = runs.a.kernel_of(&runs.a.launches[x as usize]);
    let kb = runs.b.kernel_of(&runs.b.launches[y as usize]);
    let mut parts = Vec::new();
    for (key, va) in &ka.config {
        match kb.config.get(key) {
            Some(vb) if vb.same_bits(va) => {}
            Some(vb) => parts.push(format!("{key} {va} vs {vb}")),
            None => parts.push(format!("{key} {va} vs unset")),
        }
    }
    for (key, vb) in &kb.config {
        if !ka.config.contains_key(key) {
            parts.push(format!("{key} unset vs {vb}"));
        }
    }
    parts.join(", ")
}

fn structural_words(runs: TracePair<'_>, analysis: &Analysis, d: &Divergence) -> String {
    let (only_a, only_b) = d.only;
    if let Some(diff) = &d.diff {
        let names: Vec<String> = diff.layout.iter().map(|&a| runs.arg_name(d, a)).collect();
        let outputs: Vec<String> = d.args.iter().map(|&a| runs.arg_name(d, a)).collect();
        return format!(
            "inputs equal, the strides of {} differ, and {}",
            names.join(", "),
            outputs_differ(&outputs.join(", "), outputs.len())
        );
    }
    if let (Some(x), Some(y), false) = (d.a, d.b, d.args.is_empty()) {
        let (la, lb) = (&runs.a.launches[x as usize], &runs.b.launches[y as usize]);
        let shapes = |trace: &Trace, launch, arg: ArgIndex| match trace
            .args_of(launch)
            .nth(usize::from(arg))
        {
            Some(ArgRef::Tensor(t)) => format!("{}{:?}", t.layout.dtype, t.layout.shape),
            Some(ArgRef::Scalar(_)) => "a scalar".to_owned(),
            None => "absent".to_owned(),
        };
        let parts: Vec<String> = d
            .args
            .iter()
            .map(|&arg| {
                format!(
                    "{} is {} in A, {} in B",
                    runs.arg_name(d, arg),
                    shapes(runs.a, la, arg),
                    shapes(runs.b, lb, arg)
                )
            })
            .collect();
        return format!(
            "same kernel with different shapes or dtypes: {}",
            parts.join("; ")
        );
    }
    let side = |n: usize, run: &str| match n {
        0 => None,
        1 => Some(format!("1 launch only in {run}")),
        n => Some(format!("{n} launches only in {run}")),
    };
    let parts: Vec<String> = [side(only_a, "A"), side(only_b, "B")]
        .into_iter()
        .flatten()
        .collect();
    let parts = parts.join(" and ");
    // A tail missing from a run that ended early is explained by that.
    match tritontui_engine::analysis::cut_short(runs.a, runs.b, &analysis.alignment, d) {
        Some((name, trace)) => match (&trace.early_end, trace.raised()) {
            (None, Some(raised)) => format!("{parts}: run {name}'s program raised {raised}"),
            (early, _) => format!(
                "{parts}: run {name} ended early ({})",
                early.as_ref().map(ToString::to_string).unwrap_or_default()
            ),
        },
        _ => {
            // What the run that has them alone compiled while making them
            // (or last before them).
            let span = |trace: &Trace, i: u32, n: usize| {
                let last = (i as usize + n.max(1) - 1).min(trace.launches.len() - 1);
                (trace.launches[i as usize].ts, trace.launches[last].ts)
            };
            let extra = match (d.a, d.b) {
                (Some(x), None) => Some(("A", span(runs.a, x, only_a))),
                (None, Some(y)) => Some(("B", span(runs.b, y, only_b))),
                _ => None,
            };
            let cause = extra.and_then(|(run, (first, last))| {
                tritontui_engine::compile_events::cause(runs.a, runs.b, run, first, last)
                    .map(|found| compile_line(&found))
            });
            if let Some(cause) = cause {
                return format!("{parts}: {cause}");
            }
            if let Some(words) = other_signature(runs, d) {
                return format!("{parts}: {words}");
            }
            let only =
                tritontui_engine::analysis::kernels_only_in(runs.a, runs.b, &analysis.alignment, d);
            if only.a.is_empty() || only.b.is_empty() {
                return format!("{parts} (a recompile, a graph break or an extra step)");
            }
            let listed =
                |names: &[&str]| first_few(names.iter().map(|n| format!("`{n}`")), names.len());
            format!(
                "{parts}: A runs {} where B runs {}: the two programs differ here \
                 (another model, config or version, or one compiled and one not)",
                listed(&only.a),
                listed(&only.b)
            )
        }
    }
}

/// Where both runs launch a kernel of one name here, each with other
/// arguments (compiled for dynamic shapes in one run, it takes its sizes
/// as arguments): that, in words.
fn other_signature(runs: TracePair<'_>, d: &Divergence) -> Option<String> {
    let (x, y) = (d.a?, d.b?);
    let (la, lb) = (&runs.a.launches[x as usize], &runs.b.launches[y as usize]);
    let (ka, kb) = (runs.a.kernel_of(la), runs.b.kernel_of(lb));
    if ka.name != kb.name || ka.args.len() == kb.args.len() {
        return None;
    }
    let scalars = |trace: &Trace, launch| {
        trace
            .args_of(launch)
            .filter(|arg| matches!(arg, ArgRef::Scalar(_)))
            .count()
    };
    Some(format!(
        "both run `{}`, with other arguments ({} in A, {} in B, of them {} and {} scalars: a kernel compiled for dynamic shapes takes its sizes as arguments)",
        ka.name,
        ka.args.len(),
        kb.args.len(),
        scalars(runs.a, la),
        scalars(runs.b, lb)
    ))
}

/// `A#i B#j`, with `-` for a side that lacks the launch.
pub fn index_words(a: Option<u64>, b: Option<u64>) -> String {
    let side = |run: &str, i: Option<u64>| i.map_or(format!("{run} -"), |i| format!("{run}#{i}"));
    format!("{} {}", side("A", a), side("B", b))
}

/// The step launch `a` of run A ran in, else launch `b` of run B, where
/// its trace says (`step` records).
pub fn step_of(runs: TracePair<'_>, a: Option<u32>, b: Option<u32>) -> Option<u64> {
    a.and_then(|x| runs.a.steps.of(x as usize))
        .or_else(|| b.and_then(|y| runs.b.steps.of(y as usize)))
}

/// Where a launch is: `step 400, A#10809 B#10809`, the step named where
/// the trace says.
pub fn at_words(step: Option<u64>, a: Option<u64>, b: Option<u64>) -> String {
    let launches = index_words(a, b);
    step.map_or_else(|| launches.clone(), |s| format!("step {s}, {launches}"))
}

/// The first tensor argument launch `launch` reads, followed to where its
/// bytes came from (one pass over the trace): the launch that wrote them,
/// if a recorded one did, and the answer in words (`NAME: written by
/// launch #S KERNEL (ARG)`, a graph input, uninitialized memory, or no
/// recorded launch).
pub fn first_input_origin(trace: &Trace, launch: u32) -> (Option<u32>, String) {
    let l = &trace.launches[launch as usize];
    let kernel = trace.kernel_of(l);
    let input = trace.args_of(l).enumerate().find(|(i, arg)| {
        matches!(arg, ArgRef::Tensor(_)) && tritontui_engine::compare::reads_values(kernel, *i)
    });
    let Some((arg, _)) = input else {
        return (None, "this launch reads no tensor".to_owned());
    };
    let name = kernel.arg_name(arg);
    match tritontui_engine::producer::find_origins(trace, &[(launch, arg as ArgIndex)])[0] {
        Origin::Launch(producer, parg) => {
            let by = launch_words(trace, producer, Some(parg));
            (Some(producer), format!("{name}: written by {by}"))
        }
        Origin::GraphInput(i) => (
            None,
            format!(
                "{name}: graph input {}, no recorded launch wrote it",
                trace.inputs[i as usize].name
            ),
        ),
        Origin::Allocated(a, parg) => (
            None,
            format!("{name}: {}", uninitialized_words(trace, a, parg)),
        ),
        Origin::Unrecorded | Origin::Scalar => {
            (None, format!("{name}: no recorded launch wrote it"))
        }
    }
}

/// `NAME: A | B` lines for settings that differ, `(unset)` for a side
/// without one.
pub fn setting_lines(differences: &[SettingDiff]) -> Vec<String> {
    let side = |v: &Option<String>| v.clone().unwrap_or_else(|| "(unset)".into());
    differences
        .iter()
        .map(|d| format!("{}: {} | {}", d.name, side(&d.a), side(&d.b)))
        .collect()
}

/// The first three of `total` names, then how many more: `a, b, c, 2 more`.
fn first_few(names: impl Iterator<Item = String>, total: usize) -> String {
    const SHOWN: usize = 3;
    let mut shown: Vec<String> = names.take(SHOWN).collect();
    if total > SHOWN {
        shown.push(format!("{} more", total - SHOWN));
    }
    shown.join(", ")
}

/// What makes the runs two programs, a line each, as the summary prints
/// it (none for one program run twice).
pub fn program_lines(programs: &ProgramDifferences) -> Vec<String> {
    let mut lines = Vec::new();
    let graphs = programs.graphs;
    if (graphs.a == 0) != (graphs.b == 0) {
        let called = |n: usize| match n {
            0 => "no compiled graph".to_owned(),
            1 => "1 compiled graph".to_owned(),
            n => format!("{n} compiled graphs"),
        };
        lines.push(format!(
            "A called {}, B {}",
            called(graphs.a),
            called(graphs.b)
        ));
    }
    let named = |names: &[String]| {
        let shown = first_few(names.iter().map(|n| format!("`{n}`")), names.len());
        format!("{} ({shown})", names.len())
    };
    for (run, only) in [
        ("A", &programs.kernels_only.a),
        ("B", &programs.kernels_only.b),
    ] {
        if !only.is_empty() {
            lines.push(format!("kernels only {run} launched: {}", named(only)));
        }
    }
    if !programs.other_source.is_empty() {
        lines.push(format!(
            "kernels of one name from other sources: {}",
            named(&programs.other_source)
        ));
    }
    if !programs.configs.is_empty() {
        lines.push(format!(
            "graphs compiled with other Inductor config: {}",
            named(&programs.configs)
        ));
    }
    lines
}

/// One line per recompilation or graph break one run alone has, as the
/// summary prints it.
pub fn compile_lines(differences: &[CompileDifference]) -> Vec<String> {
    differences.iter().map(compile_line).collect()
}

/// A recompilation or graph break one run alone has, in words.
fn compile_line(d: &CompileDifference) -> String {
    let at = d
        .location
        .as_deref()
        .map_or(String::new(), |l| format!(" at {l}"));
    match d.event.as_str() {
        "recompile" => format!(
            "{} recompiled {} (compile {}){at}: {}",
            d.run,
            d.function.as_deref().unwrap_or("a frame"),
            d.compile_id,
            d.detail
        ),
        _ => format!(
            "{} broke the graph (compile {}){at}: {}",
            d.run, d.compile_id, d.detail
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{program_lines, setting_lines};
    use tritontui_engine::Sides;
    use tritontui_engine::programs::ProgramDifferences;
    use tritontui_engine::settings::SettingDiff;

    #[test]
    fn two_programs_are_said_by_their_graphs_and_kernels_and_one_program_says_nothing() {
        let names = |n: &[&str]| n.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let eager_and_compiled = ProgramDifferences {
            graphs: Sides { a: 0, b: 2 },
            kernels_only: Sides {
                a: names(&["aten::gelu"]),
                b: names(&["k0", "k1", "k2", "k3", "k4"]),
            },
            other_source: names(&["cpp_fused_gelu_0"]),
            configs: names(&["inductor.cpp.simdlen"]),
        };
        assert_eq!(
            program_lines(&eager_and_compiled),
            [
                "A called no compiled graph, B 2 compiled graphs",
                "kernels only A launched: 1 (`aten::gelu`)",
                "kernels only B launched: 5 (`k0`, `k1`, `k2`, 2 more)",
                "kernels of one name from other sources: 1 (`cpp_fused_gelu_0`)",
                "graphs compiled with other Inductor config: 1 (`inductor.cpp.simdlen`)",
            ]
        );
        let same = ProgramDifferences {
            graphs: Sides { a: 2, b: 3 },
            ..ProgramDifferences::default()
        };
        assert!(program_lines(&same).is_empty());
        assert!(!same.any() && eager_and_compiled.any());
    }

    #[test]
    fn a_setting_one_run_lacks_is_said_unset() {
        let differ = |name: &str, a: Option<&str>, b: Option<&str>| SettingDiff {
            name: name.into(),
            a: a.map(Into::into),
            b: b.map(Into::into),
        };
        assert_eq!(
            setting_lines(&[
                differ("torch", Some("2.11.0"), Some("2.10.0")),
                differ("inductor.fallback_random", None, Some("True")),
            ]),
            [
                "torch: 2.11.0 | 2.10.0",
                "inductor.fallback_random: (unset) | True"
            ]
        );
    }
}

//! What the comparison of two programs' numerics says
//! (`Analysis::accuracy`): which points were aligned, the error at each
//! and its bound, and the first point past it.

use tritontui_engine::TracePair;
use tritontui_engine::accuracy::fused::{FusedOp, ops_only};
use tritontui_engine::accuracy::{Accuracy, AlignedPoint, GROWTH, floor};
use tritontui_trace::{ArgIndex, Trace};

/// The bound's rule, as reports state it.
pub fn rule() -> String {
    format!(
        "a point's relative error (estimated from its samples) may be {GROWTH} times the largest \
         relative error of what its launch in run B read (followed back through the data flow), \
         and at least 2^(-5p/8) for the coarser dtype of p significand bits (2^-15 for float32, \
         2^-5 for bfloat16); its absolute error likewise, against the absolute errors upstream \
         and that share of its values' scale. A point is past its bound when past both. Where \
         what a launch read includes a tensor only run B materializes, its error is estimated by \
         what made it. A point past its bound is a root cause only when its launch read the \
         same bits in both runs (or a reference run judges it); elsewhere it is a suspect"
    )
}

/// One side of a point: `A#12 `aten::gelu` in `layers.1.mlp` (result)`,
/// the modules named where the trace says (an eager op's, with samples;
/// a compiled kernel's, from its compile).
fn side_words(run: &str, trace: &Trace, (launch, arg): (u32, ArgIndex)) -> String {
    let l = &trace.launches[launch as usize];
    let kernel = trace.kernel_of(l);
    let arg = kernel.arg_name(usize::from(arg));
    let module = module_words(&trace.modules_of(launch as usize, &arg));
    format!("{run}#{} `{}`{module} ({arg})", l.seq, kernel.name)
}

/// Where a value was computed, from [`Trace::modules_of`]: ` in `x``, or
/// ` in `x` (fused with ops of `a`, `b`)` for a kernel that computed it
/// from ops of several modules; empty where the trace does not say.
fn module_words(paths: &[&str]) -> String {
    let name = |path: &str| {
        if path.is_empty() {
            "the outermost module".to_owned()
        } else {
            format!("`{path}`")
        }
    };
    let Some((last, others)) = paths.split_last() else {
        return String::new();
    };
    if others.is_empty() {
        return format!(" in {}", name(last));
    }
    let others: Vec<String> = others.iter().map(|p| name(p)).collect();
    format!(
        " in {} (fused with ops of {})",
        name(last),
        others.join(", ")
    )
}

/// Where a point is in both runs, and the result both hold it as.
pub fn point_words(runs: TracePair<'_>, p: &AlignedPoint) -> String {
    let place = format!(
        "{} / {}",
        side_words("A", runs.a, p.a),
        side_words("B", runs.b, p.b)
    );
    match &p.result {
        Some(name) => format!("result `{name}`, last written by {place}"),
        None => place,
    }
}

/// The error at a point: `relative error 1.2e-2 (max |a-b| 7.8e-3,
/// 5.1e5 ulps of float32)`.
pub fn error_words(p: &AlignedPoint) -> String {
    let ulps = if p.error.ulps >= 10.0 {
        format!("{:.1e}", p.error.ulps)
    } else {
        format!("{:.1}", p.error.ulps)
    };
    format!(
        "relative error {:.1e} (max |a-b| {:.1e}, {ulps} ulps of {})",
        p.error.relative, p.error.max_abs, p.dtype
    )
}

/// What bounds a point: `bound 3.1e-5: 16× the largest error upstream
/// (1.1e-7), at least 2^-15 for float32; absolute 2.0e-9`. A point is
/// past its bound only when past both.
pub fn bound_words(p: &AlignedPoint) -> String {
    if let Some(check) = &p.reference {
        return format!(
            "bound by the accuracy minifier's rule against the reference run: B's error against it {:.1e}, at most {:.1e} ({}× A's {:.1e}, plus {:.0e})",
            check.error_b,
            check.bound,
            tritontui_engine::accuracy::reference::multiplier(&p.dtype, p.numel),
            check.error_a,
            tritontui_engine::accuracy::reference::TOL / 10.0
        );
    }
    let floor_bits = -floor(&p.dtype).log2();
    let relative = if GROWTH * p.upstream > floor(&p.dtype) {
        format!(
            "bound {:.1e}: {GROWTH}× the largest error upstream ({:.1e})",
            p.bound, p.upstream
        )
    } else {
        format!(
            "bound {:.1e}: at least 2^-{floor_bits} for {} (the largest error upstream, {:.1e}, allows less)",
            p.bound, p.dtype, p.upstream
        )
    };
    format!(
        "{relative}; absolute {:.1e} against {:.1e} root mean square",
        p.bound_abs, p.error.rms
    )
}

/// The sentence of the first point past its bound: the root cause of
/// kind `accuracy`, with the ops one run's kernel computes and the
/// other's does not, where both kernels' compiles say.
pub fn past_bound_words(runs: TracePair<'_>, p: &AlignedPoint) -> String {
    let mut ops: String = ops_differ_words(runs, p)
        .iter()
        .map(|words| format!("; {words}"))
        .collect();
    if !p.judged && p.inputs_equal {
        ops.push_str(
            "; what B's launch read includes a buffer only B materializes, made from inputs equal in both runs: the error arose in this launch or in the one that made it",
        );
    }
    format!(
        "{}: {}, past its {} (estimated from the samples both runs took){ops}; every aligned point before it whose bound is known is within it",
        point_words(runs, p),
        error_words(p),
        bound_words(p)
    )
}

/// The first point past its bound in a line, what differs first (the UI's
/// header): `only B's kernel computes `aten.round` in `1` · B#15 `k`
/// (out_ptr4) in `2.norm`: relative error 5.7e-4, past its bound 3.1e-5`.
pub fn headline_words(runs: TracePair<'_>, p: &AlignedPoint) -> String {
    let mut parts = ops_differ_words(runs, p);
    let l = &runs.b.launches[p.b.0 as usize];
    let kernel = runs.b.kernel_of(l);
    let arg = kernel.arg_name(usize::from(p.b.1));
    let module = module_words(&runs.b.modules_of(p.b.0 as usize, &arg));
    parts.push(format!(
        "B#{} `{}` ({arg}){module}: relative error {:.1e}, past its bound {:.1e}",
        l.seq, kernel.name, p.error.relative, p.bound
    ));
    parts.join(" · ")
}

/// `only B's kernel computes `aten.round` in `1``, for each run whose
/// kernel computes ops the other's does not (where both compiles say).
fn ops_differ_words(runs: TracePair<'_>, p: &AlignedPoint) -> Vec<String> {
    let (only_a, only_b) = ops_only(runs, p.a.0 as usize, p.b.0 as usize);
    [("A", only_a), ("B", only_b)]
        .into_iter()
        .filter(|(_, only)| !only.is_empty())
        .map(|(run, only)| format!("only {run}'s kernel computes {}", fused_ops_words(&only)))
        .collect()
}

/// `` `aten.mul`, `aten.round` in `1`; `aten.add` in the outermost module ``:
/// ops grouped by their module, in order.
fn fused_ops_words(ops: &[FusedOp]) -> String {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for op in ops {
        let name = format!("`{}`", op.op);
        match groups.last_mut() {
            Some((module, names)) if *module == op.module => names.push(name),
            _ => groups.push((&op.module, vec![name])),
        }
    }
    groups
        .into_iter()
        .map(|(module, names)| format!("{}{}", names.join(", "), module_words(&[module])))
        .collect::<Vec<_>>()
        .join("; ")
}

/// How much of the comparison the reference run of `points` points
/// judges: `against the reference run (176 points): 150 of 1,073 aligned
/// points and 0 of 81 differing results have their counterpart in it;
/// the others are judged by their estimated bounds`.
fn reference_coverage(accuracy: &Accuracy, points: usize) -> String {
    let (mut aligned, mut judged, mut results, mut results_judged) = (0, 0, 0, 0);
    for p in &accuracy.aligned {
        let referenced = usize::from(p.reference.is_some());
        if p.result.is_some() {
            results += 1;
            results_judged += referenced;
        } else {
            aligned += 1;
            judged += referenced;
        }
    }
    let mut line = format!(
        "against the reference run ({points} points): {judged} of {aligned} aligned points and {results_judged} of {results} differing results have their counterpart in it"
    );
    if judged < aligned || results_judged < results {
        line.push_str("; the others are judged by their estimated bounds");
    }
    line
}

/// The summary's lines on the numerics: how many points were aligned,
/// the largest error within bounds, and what could not be judged.
pub fn summary_lines(runs: TracePair<'_>, accuracy: &Accuracy) -> Vec<String> {
    let results = accuracy
        .aligned
        .iter()
        .filter(|p| p.result.is_some())
        .count();
    let mut lines = vec![format!(
        "{} of {} points (written floating tensors with samples) in A and {} in B aligned, {} differing results compared (errors estimated from 32 samples a tensor)",
        accuracy.aligned.len() - results,
        accuracy.points.0,
        accuracy.points.1,
        results
    )];
    if let Some(points) = accuracy.reference_points {
        lines.push(reference_coverage(accuracy, points));
    }
    lines.extend(random_parting_line(runs, accuracy));
    let within = accuracy
        .aligned
        .iter()
        .filter(|p| !p.drawn_apart && !p.past_bound());
    if let Some(largest) = within
        .filter(|p| p.error.relative > 0.0)
        .max_by(|x, y| x.error.relative.total_cmp(&y.error.relative))
    {
        lines.push(format!(
            "largest error within its bound: {} at {} ({})",
            error_words(largest),
            point_words(runs, largest),
            bound_words(largest)
        ));
    }
    let unsure: Vec<&AlignedPoint> = accuracy.unsure().collect();
    if let Some(first) = unsure.first() {
        let one = unsure.len() == 1;
        lines.push(format!(
            "{} aligned point{} past {} bound, not called root causes: what {} read differs between the runs (32 samples can miss an error that sits in a few elements) or is a tensor only B materializes; `--reference` judges them. The first: {}",
            unsure.len(),
            if one { "" } else { "s" },
            if one { "its" } else { "their" },
            if one { "its launch" } else { "their launches" },
            point_in_full(runs, first)
        ));
    }
    let absorbed: Vec<&AlignedPoint> = accuracy.absorbed().collect();
    if let Some(first) = absorbed.first() {
        let bounds = if absorbed.len() == 1 {
            "its bound"
        } else {
            "their bounds"
        };
        let (past, why) = if accuracy.results_equal {
            (
                bounds,
                "the results agree bit for bit, so no error reached them",
            )
        } else if accuracy.results_within_rounding && !accuracy.results_within_reference {
            (
                bounds,
                "every differing result is within rounding of its counterpart (at most the floor of its dtype), so no error past rounding reached them",
            )
        } else {
            (
                "the accuracy minifier's rule against the reference run",
                "every differing result stays within it, and the minifier judges a program by its results",
            )
        };
        lines.push(format!(
            "{} aligned point{} past {past}, absorbed: {why}. The first: {}",
            absorbed.len(),
            if absorbed.len() == 1 { "" } else { "s" },
            point_in_full(runs, first)
        ));
    }
    if !accuracy.unsampled_results.is_empty() {
        lines.push(format!(
            "{} differing results have no samples in one run (not judged): {}",
            accuracy.unsampled_results.len(),
            super::first_few(
                accuracy
                    .unsampled_results
                    .iter()
                    .map(|name| format!("`{name}`")),
                accuracy.unsampled_results.len()
            )
        ));
    }
    lines
}

/// Where the runs' random numbers part, when they do, and what that
/// leaves unjudged.
fn random_parting_line(runs: TracePair<'_>, accuracy: &Accuracy) -> Option<String> {
    let parting = accuracy.random_parting?;
    let draw = |trace: &Trace, run: &str, index: Option<u32>| match index {
        Some(i) => {
            let launch = &trace.launches[i as usize];
            format!("{run}#{} `{}`", launch.seq, trace.kernel_of(launch).name)
        }
        None => format!("no more draws in {run}"),
    };
    let seeds = |trace: &Trace, index: Option<u32>| {
        index.is_some_and(|i| {
            trace.kernel_of(&trace.launches[i as usize]).name == "aten::randint.low_out"
        })
    };
    let hint = if seeds(runs.a, parting.a) != seeds(runs.b, parting.b) {
        "; one run's compiled code draws seeds and makes its random numbers in its kernels, the other's ops draw their own (`torch._inductor.config.fallback_random = True` makes compiled code draw as eager does)"
    } else {
        ""
    };
    let apart = accuracy.apart_by_draws().count();
    Some(format!(
        "the runs draw other random numbers from {} / {} on{hint}: {apart} differing point{} written from there on {} not judged (nothing bounds how far apart other random numbers take them)",
        draw(runs.a, "A", parting.a),
        draw(runs.b, "B", parting.b),
        if apart == 1 { "" } else { "s" },
        if apart == 1 { "is" } else { "are" },
    ))
}

/// A point, its error and its bound, as a summary line names the first of
/// several.
fn point_in_full(runs: TracePair<'_>, p: &AlignedPoint) -> String {
    format!(
        "{}: {}, {}",
        point_words(runs, p),
        error_words(p),
        bound_words(p)
    )
}

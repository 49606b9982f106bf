//! Lines of kernel source that commonly make results depend on scheduling
//! or configuration: atomics, reductions, matrix products, OpenMP loops,
//! random numbers. The source pane marks them; the verdict mentions atomics.

/// What is said of an atomic update.
const ATOMIC: &str = "atomic update: the order of additions varies between runs";

/// Patterns that commonly make a kernel's result depend on scheduling or
/// configuration, with what to say about them.
const SUSPECTS: &[(&str, &str)] = &[
    ("tl.atomic_", ATOMIC),
    ("atomic_add(", ATOMIC),
    // Inductor's C++ helper for vectorised atomic adds.
    ("atomic_add_vec<", ATOMIC),
    ("atomicAdd(", ATOMIC),
    ("#pragma omp atomic", ATOMIC),
    (
        "tl.sum(",
        "reduction: its order depends on the block sizes and warps",
    ),
    (
        "tl.reduce(",
        "reduction: its order depends on the block sizes and warps",
    ),
    (
        "welford",
        "Welford reduction: its order depends on the block sizes",
    ),
    (
        "tl.dot(",
        "matrix product: its accumulation order depends on the config",
    ),
    (
        "#pragma omp parallel",
        "OpenMP loop: a reduction's order depends on the thread count",
    ),
    ("tl.rand", "random numbers: the seed or offset must match"),
    ("philox", "random numbers: the seed or offset must match"),
    (
        "load_seed(",
        "random numbers: the seed or offset must match",
    ),
];

/// Lines that commonly cause nondeterminism, with the reason.
pub fn suspicious_lines(text: &str) -> Vec<(usize, &'static str)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let code = line.split('#').next().unwrap_or(line);
            let code = if line.trim_start().starts_with("#pragma") {
                line
            } else {
                code
            };
            SUSPECTS
                .iter()
                .find(|(pattern, _)| code.contains(pattern))
                .map(|(_, why)| (i, *why))
        })
        .collect()
}

/// Whether the source calls an atomic update (comments and metadata, such
/// as Inductor's `'atomic_add_found': False`, do not count).
pub fn has_atomic_calls(text: &str) -> bool {
    suspicious_lines(text).iter().any(|(_, why)| *why == ATOMIC)
}

/// Whether a kernel uses atomics: the compiler's `atomic_add_found` when it
/// said, else whether its source calls an atomic update.
pub fn uses_atomics(trace: &tritontui_trace::Trace, kernel: &tritontui_trace::Kernel) -> bool {
    match kernel.meta.get("atomic_add_found") {
        Some(tritontui_trace::Scalar::Bool(found)) => *found,
        _ => trace
            .source_of(kernel)
            .is_some_and(|s| has_atomic_calls(&s.text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomics_and_reductions_are_marked_but_comments_are_not() {
        let text = "inductor_meta={'atomic_add_found': True},\n    tl.atomic_add(out_ptr0 + i, v)\n    s = tl.sum(v, 0)\n    # tl.atomic_add in a comment\n#pragma omp atomic\n";
        let lines: Vec<usize> = suspicious_lines(text).into_iter().map(|(i, _)| i).collect();
        assert_eq!(lines, [1, 2, 4]);
    }

    #[test]
    fn metadata_naming_atomics_is_not_an_atomic_call() {
        let decorator = "    inductor_meta={'kernel_name': 'k', 'atomic_add_found': False},\n    tl.store(out_ptr0 + x0, v)\n";
        assert!(!has_atomic_calls(decorator));
        assert!(has_atomic_calls(
            "    tl.atomic_add(out_ptr0 + x0, v, sem='relaxed')\n"
        ));
        assert!(has_atomic_calls(
            "            atomic_add(&out_ptr0[x0], tmp0);\n"
        ));
        // What Inductor's C++ index_add really calls.
        assert!(has_atomic_calls(
            "    atomic_add_vec<float, 2, 1>(out_ptr0, tmp10, tmp12);\n"
        ));
    }
}

//! One request compared by its rows between two batchings of it, in
//! words: the summary's lines and the batch-variant launch's verdict.

use tritontui_engine::TracePair;
use tritontui_engine::batch::{BatchComparison, BatchVariant};
use tritontui_trace::{ArgRef, Trace};

/// The summary's lines under `batch (request rows):`.
pub fn summary_lines(runs: TracePair<'_>, batch: &BatchComparison) -> Vec<String> {
    let mut lines = vec![format!(
        "request {} of A's {} against request {} of B's {}: {} aligned launches compared by the request's rows",
        batch.request.0,
        requests(batch.batch.0),
        batch.request.1,
        requests(batch.batch.1),
        batch.compared,
    )];
    if batch.unaligned != (0, 0) {
        lines.push(format!(
            "{} launches only in A and {} only in B left out (kernels of another name or shape)",
            batch.unaligned.0, batch.unaligned.1
        ));
    }
    match &batch.root_cause {
        Some(root) => {
            lines.push(format!(
                "first batch-variant launch: A#{} B#{} `{}`: {}",
                runs.seq_a(root.a),
                runs.seq_b(root.b),
                runs.a.kernel_of(&runs.a.launches[root.a as usize]).name,
                variant_words(runs, root),
            ));
            if batch.carried > 0 {
                let one = batch.carried == 1;
                lines.push(format!(
                    "{} launch{} after it {} the difference (what {} read already differed)",
                    batch.carried,
                    if one { "" } else { "es" },
                    if one { "carries" } else { "carry" },
                    if one { "it" } else { "they" },
                ));
            }
        }
        None if batch.rows_identical() => lines.push(
            "no launch makes the request's rows depend on its batch: every compared launch wrote the same request rows".to_owned(),
        ),
        None if batch.unjudged == 0 => match batch.first_read_differing {
            Some((a, b)) => lines.push(format!(
                "no batch-variant launch found: the request's rows already differ in what A#{} B#{} `{}` read, and no launch before it was seen to change them (is it the same request in both runs? `--request A:N B:M` picks it)",
                runs.seq_a(a),
                runs.seq_b(b),
                runs.a.kernel_of(&runs.a.launches[a as usize]).name,
            )),
            None if batch.differing == 0 => lines.push(format!(
                "every compared launch wrote the same request rows, but {} stretch{} of launches only one run made (an extra copy) {} not compared",
                batch.one_sided,
                if batch.one_sided == 1 { "" } else { "es" },
                if batch.one_sided == 1 { "was" } else { "were" },
            )),
            None => lines.push(
                "no launch makes the request's rows depend on its batch: the launches that wrote differing request rows read differing or uncomparable ones".to_owned(),
            ),
        },
        None => {}
    }
    lines.extend(results_line(runs, batch));
    if let Some((a, b)) = batch.first_unjudged {
        lines.push(format!(
            "{}{} could not be judged: the rows of what {} wrote are not in the traces (a tensor over 1,024 rows has none), or {} read something that could not be compared; the first: A#{} B#{} `{}`",
            if batch.root_cause.is_some() {
                "before it, "
            } else {
                "no batch-variant launch found, but "
            },
            batch.unjudged,
            if batch.unjudged == 1 { "it" } else { "they" },
            if batch.unjudged == 1 { "it" } else { "they" },
            runs.seq_a(a),
            runs.seq_b(b),
            runs.a.kernel_of(&runs.a.launches[a as usize]).name,
        ));
    }
    lines
}

/// How the request's rows of the program's results compare, where any
/// was judged.
fn results_line(runs: TracePair<'_>, batch: &BatchComparison) -> Option<String> {
    let results = &batch.results;
    let unknown = match results.unknown {
        0 => String::new(),
        n => format!(
            "; {n} result{} could not be judged (the rows of what last wrote {} are not in the traces)",
            if n == 1 { "" } else { "s" },
            if n == 1 { "it" } else { "them" },
        ),
    };
    if results.compared == 0 {
        return (results.unknown > 0).then(|| {
            format!(
                "the request's rows of the results could not be judged: the rows of what last wrote {} are not in the traces",
                if results.unknown == 1 { "the result" } else { "them" },
            )
        });
    }
    Some(if results.differing.is_empty() {
        format!(
            "the request's rows of {} result{} agree alone and batched{unknown}",
            results.compared,
            if results.compared == 1 { "" } else { "s" },
        )
    } else {
        format!(
            "the request's rows differ in {} of {} result{}: {}{unknown}",
            results.differing.len(),
            results.compared,
            if results.compared == 1 { "" } else { "s" },
            differing_results(runs.a, &results.differing)
        )
    })
}

/// Results of `trace` by index, as a person names them, the first few.
fn differing_results(trace: &Trace, indices: &[usize]) -> String {
    const SHOWN: usize = 3;
    let Some(results) = trace.results.as_deref() else {
        return String::new();
    };
    let mut named: Vec<String> = indices
        .iter()
        .take(SHOWN)
        .filter_map(|&i| results.get(i))
        .map(|t| match &t.name {
            Some(name) => format!("{name} {}", super::result_name(trace, t)),
            None => super::result_name(trace, t),
        })
        .collect();
    if indices.len() > SHOWN {
        named.push(format!("{} more", indices.len() - SHOWN));
    }
    named.join(", ")
}

/// The verdict on a batch-variant launch: which rows of what it wrote
/// differ, and how the two runs launched it.
pub fn variant_words(runs: TracePair<'_>, root: &BatchVariant) -> String {
    let (la, lb) = (
        &runs.a.launches[root.a as usize],
        &runs.b.launches[root.b as usize],
    );
    let kernel = runs.a.kernel_of(la);
    let args: Vec<String> = root
        .args
        .iter()
        .map(|d| {
            let name = kernel.arg_name(usize::from(d.arg));
            match d.rows {
                0 => format!("`{name}` (compared whole)"),
                rows => format!(
                    "`{name}` ({} of the request's {rows} rows)",
                    d.differing.len()
                ),
            }
        })
        .collect();
    let mut words = if root.stretch.0.is_empty() {
        format!(
            "the request's rows of {} differ while everything it read agrees: its result for this request depends on what it was batched with",
            args.join(", ")
        )
    } else {
        format!(
            "the two batch sizes compiled these launches into other kernels: A ran {}, B ran {}; the request's rows of {} differ while everything they read from before agrees: the request's result depends on which kernels its batch size chose",
            stretch_words(runs.a, &root.stretch.0, |i| runs.seq_a(i)),
            stretch_words(runs.b, &root.stretch.1, |i| runs.seq_b(i)),
            args.join(", ")
        )
    };
    let (grid_a, grid_b) = (la.grid(), lb.grid());
    if !grid_a.is_empty() || !grid_b.is_empty() {
        words.push_str(&format!("; grid {grid_a:?} in A, {grid_b:?} in B"));
    }
    if !kernel.config.is_empty() {
        let config: Vec<String> = kernel
            .config
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        words.push_str(&format!(" ({})", config.join(", ")));
    }
    words.push_str(&format!(
        "; called with {} in A, {} in B",
        shapes(runs.a, root.a),
        shapes(runs.b, root.b)
    ));
    words
}

/// `` `triton_red_fused_0` (#3), `triton_per_fused_1` (#4) in `norm` ``:
/// a stretch's launches, with the modules they were compiled from.
fn stretch_words(trace: &Trace, launches: &[u32], seq: impl Fn(u32) -> u64) -> String {
    let named: Vec<String> = launches
        .iter()
        .map(|&i| {
            let launch = &trace.launches[i as usize];
            format!("`{}` (#{})", trace.kernel_of(launch).name, seq(i))
        })
        .collect();
    let mut modules: Vec<&str> = launches
        .iter()
        .filter_map(|&i| trace.module_of(&trace.launches[i as usize]))
        .filter(|m| !m.is_empty())
        .collect();
    modules.dedup();
    match modules.as_slice() {
        [] => named.join(", "),
        _ => format!("{} in `{}`", named.join(", "), modules.join("`, `")),
    }
}

/// `[1, 512], [2048, 512]`: the shapes of a launch's tensors.
fn shapes(trace: &Trace, index: u32) -> String {
    trace
        .args_of(&trace.launches[index as usize])
        .filter_map(|arg| match arg {
            ArgRef::Tensor(t) => Some(format!("{:?}", t.layout.shape)),
            ArgRef::Scalar(_) => None,
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A strip of at most `cells` characters over `total` rows, each cell a
/// run of rows: `█` where one of them differs, `·` where none does.
pub fn row_strip(total: u64, differing: &[u64], cells: usize) -> String {
    let cells = (cells as u64).min(total).max(1);
    let per_cell = total.div_ceil(cells).max(1);
    let mut strip = vec!['·'; total.div_ceil(per_cell) as usize];
    for &row in differing {
        if let Some(cell) = strip.get_mut((row / per_cell) as usize) {
            *cell = '█';
        }
    }
    strip.into_iter().collect()
}

fn requests(n: u64) -> String {
    if n == 1 {
        "1 request".to_owned()
    } else {
        format!("{n} requests")
    }
}

#[cfg(test)]
mod tests {
    use super::row_strip;

    #[test]
    fn a_strip_marks_the_cells_whose_rows_differ() {
        assert_eq!(row_strip(8, &[0, 5], 8), "█····█··");
        // 64 rows in 8 cells of 8: rows 9 and 63 fall in cells 1 and 7.
        assert_eq!(row_strip(64, &[9, 63], 8), "·█·····█");
        assert_eq!(row_strip(3, &[], 8), "···");
    }
}

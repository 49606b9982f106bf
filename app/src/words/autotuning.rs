//! How each run came to launch a kernel with the config it did, from the
//! recorder's autotuning records (`compile` records `autotune` and
//! `autotune_cache`): the configs benchmarked with their times, a
//! coordinate-descent search, or a config handed over by Inductor's
//! autotune cache. A `launch-config` divergence says this for both runs.

use std::collections::BTreeMap;
use tritontui_trace::Kernel;
use tritontui_trace::format::{CompileRecord, Scalar};

/// Close timings: a benchmark whose runner-up is within this fraction of
/// the winner could have gone the other way on another run.
const CLOSE: f64 = 0.05;

/// How `run` (`A` or `B`) chose `kernel`'s config, as one clause, from
/// the run's autotuning records (among its `compiles`) of a kernel of its
/// name: the record that chose the config the kernel was launched with
/// where there is one, else the last.
pub fn words(compiles: &[CompileRecord], run: &str, kernel: &Kernel) -> String {
    let launched = config_items(&kernel.config);
    let of_kernel: Vec<&CompileRecord> = compiles
        .iter()
        .filter(|c| c.name == kernel.name && (c.event == "autotune" || c.event == "autotune_cache"))
        .collect();
    let chose_launched =
        |c: &&&CompileRecord| text(c, "chosen").is_some_and(|chosen| items(&chosen) == launched);
    let Some(record) = of_kernel
        .iter()
        .rev()
        .find(chose_launched)
        .or(of_kernel.last())
    else {
        return format!(
            "{run} recorded no autotuning of it (one config, or tuned before recording began)"
        );
    };
    let chosen = text(record, "chosen").unwrap_or_else(|| "?".to_owned());
    match (record.event.as_str(), text(record, "method").as_deref()) {
        ("autotune_cache", _) => match text(record, "state").as_deref() {
            Some("hit") => format!("{run} took {chosen} from Inductor's autotune cache"),
            Some(state) => format!("{run}'s autotune cache: {state}"),
            None => format!("{run}'s autotune cache said nothing"),
        },
        (_, Some("coordinate_descent")) => {
            let start = text(record, "start").unwrap_or_else(|| "?".to_owned());
            // The benchmark that chose where the search started, if any.
            let benchmark = of_kernel.iter().rev().find(|c| {
                c.ts <= record.ts
                    && text(c, "method").as_deref() == Some("benchmark")
                    && text(c, "chosen").is_some_and(|c| items(&c) == items(&start))
            });
            let kept = items(&start) == items(&chosen);
            match (benchmark, kept) {
                (Some(benchmark), true) => format!(
                    "{}, then coordinate descent kept it",
                    benchmark_words(run, benchmark, &start)
                ),
                (Some(benchmark), false) => format!(
                    "{}, then coordinate descent went on to {chosen}",
                    benchmark_words(run, benchmark, &start)
                ),
                (None, true) => format!("{run}'s coordinate descent kept {start}"),
                (None, false) => {
                    format!("{run}'s coordinate descent went from {start} to {chosen}")
                }
            }
        }
        _ => benchmark_words(run, record, &chosen),
    }
}

/// `A benchmarked 3 configs and chose X (0.0123 ms; runner-up Y 0.0125 ms,
/// 1.6 % slower: close enough for noise to decide)`.
fn benchmark_words(run: &str, record: &CompileRecord, chosen: &str) -> String {
    let mut tried: Vec<(String, f64)> = text(record, "tried")
        .unwrap_or_default()
        .split("; ")
        .filter_map(|entry| {
            let (config, ms) = entry.rsplit_once(": ")?;
            Some((config.to_owned(), ms.strip_suffix(" ms")?.parse().ok()?))
        })
        .collect();
    tried.sort_by(|x, y| x.1.total_cmp(&y.1));
    let mut words = format!(
        "{run} benchmarked {} configs and chose {chosen}",
        tried.len()
    );
    match tried.as_slice() {
        [best, runner_up, ..] => {
            let slower = (runner_up.1 - best.1) / best.1;
            words.push_str(&format!(
                " ({:.4} ms; runner-up {} {:.4} ms, {:.1} % slower{})",
                best.1,
                runner_up.0,
                runner_up.1,
                slower * 100.0,
                if slower <= CLOSE {
                    ": close enough for timing noise to decide"
                } else {
                    ""
                }
            ));
        }
        [best] => words.push_str(&format!(" ({:.4} ms)", best.1)),
        [] => {}
    }
    words
}

fn text(record: &CompileRecord, key: &str) -> Option<String> {
    match record.info.get(key) {
        Some(Scalar::Str(s)) => Some(s.clone()),
        _ => None,
    }
}

/// A config text's `key=value` items, in order of key.
fn items(config: &str) -> Vec<String> {
    let mut items: Vec<String> = config.split_whitespace().map(str::to_owned).collect();
    items.sort();
    items
}

/// A kernel's config as the same items.
fn config_items(config: &BTreeMap<String, Scalar>) -> Vec<String> {
    let mut items: Vec<String> = config
        .iter()
        .map(|(key, value)| match value {
            Scalar::Str(s) => format!("{key}={s}"),
            other => format!("{key}={other}"),
        })
        .collect();
    items.sort();
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(event: &str, info: &[(&str, &str)]) -> CompileRecord {
        CompileRecord {
            event: event.to_owned(),
            name: "triton_red_fused_sum_0".to_owned(),
            pid: 1,
            ts: 0,
            dur_ns: 0,
            info: info
                .iter()
                .map(|(k, v)| ((*k).to_owned(), Scalar::Str((*v).to_owned())))
                .collect(),
        }
    }

    fn kernel(r0_block: i64) -> Kernel {
        Kernel {
            name: "triton_red_fused_sum_0".to_owned(),
            backend: "triton".to_owned(),
            args: Vec::new(),
            source: None,
            meta: BTreeMap::new(),
            config: [
                ("R0_BLOCK".to_owned(), Scalar::Int(r0_block)),
                ("num_warps".to_owned(), Scalar::Int(4)),
            ]
            .into_iter()
            .collect(),
        }
    }

    #[test]
    fn the_benchmark_that_chose_the_launched_config_is_named_with_its_runner_up() {
        let t = vec![
            record(
                "autotune",
                &[
                    ("method", "benchmark"),
                    (
                        "tried",
                        "R0_BLOCK=8 num_warps=4: 0.0125 ms; R0_BLOCK=64 num_warps=4: 0.012 ms",
                    ),
                    ("chosen", "R0_BLOCK=64 num_warps=4"),
                ],
            ),
            record(
                "autotune",
                &[
                    ("method", "benchmark"),
                    ("tried", ""),
                    ("chosen", "R0_BLOCK=2 num_warps=1"),
                ],
            ),
        ];
        assert_eq!(
            words(&t, "A", &kernel(64)),
            "A benchmarked 2 configs and chose R0_BLOCK=64 num_warps=4 (0.0120 ms; runner-up \
             R0_BLOCK=8 num_warps=4 0.0125 ms, 4.2 % slower: close enough for timing noise to decide)"
        );
    }

    #[test]
    fn a_coordinate_descent_is_told_after_the_benchmark_it_started_from() {
        let mut searched = record(
            "autotune",
            &[
                ("method", "coordinate_descent"),
                ("start", "R0_BLOCK=8 num_warps=4"),
                ("chosen", "R0_BLOCK=64 num_warps=4"),
            ],
        );
        searched.ts = 1;
        let t = vec![
            record(
                "autotune",
                &[
                    ("method", "benchmark"),
                    (
                        "tried",
                        "R0_BLOCK=8 num_warps=4: 0.01 ms; R0_BLOCK=2 num_warps=4: 0.02 ms",
                    ),
                    ("chosen", "R0_BLOCK=8 num_warps=4"),
                ],
            ),
            searched,
        ];
        assert_eq!(
            words(&t, "B", &kernel(64)),
            "B benchmarked 2 configs and chose R0_BLOCK=8 num_warps=4 (0.0100 ms; runner-up \
             R0_BLOCK=2 num_warps=4 0.0200 ms, 100.0 % slower), then coordinate descent went on \
             to R0_BLOCK=64 num_warps=4"
        );
    }

    #[test]
    fn a_coordinate_descent_that_kept_its_start_says_so() {
        let t = vec![record(
            "autotune",
            &[
                ("method", "coordinate_descent"),
                ("start", "num_warps=4 R0_BLOCK=8"),
                ("chosen", "R0_BLOCK=8 num_warps=4"),
            ],
        )];
        assert_eq!(
            words(&t, "A", &kernel(8)),
            "A's coordinate descent kept num_warps=4 R0_BLOCK=8"
        );
    }

    #[test]
    fn a_cache_hit_and_no_record_are_said_as_such() {
        let hit = vec![record(
            "autotune_cache",
            &[("state", "hit"), ("chosen", "R0_BLOCK=8 num_warps=4")],
        )];
        assert_eq!(
            words(&hit, "B", &kernel(8)),
            "B took R0_BLOCK=8 num_warps=4 from Inductor's autotune cache"
        );
        assert!(words(&[], "A", &kernel(8)).starts_with("A recorded no autotuning"));
    }
}

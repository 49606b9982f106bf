//! Two runs of several ranks compared rank by rank. Each run is a folder of
//! rank traces (`tritontui record -o 'run0/rank{rank}.msgpack' -- torchrun
//! ...`); ranks are paired by the rank their headers name (else by
//! `rank<N>` in the file name), each pair is compared on its own, several
//! at a time but never more than [`MAX_LOADED`] pairs in memory, and the
//! earliest cause across ranks is the root cause that did not come into
//! its rank through a collective.

use crate::output::report::{DivergenceReport, Reach, Report};
use anyhow::Context;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use tritontui_engine::analysis::{Analysis, Kind, Options, Verdict};
use tritontui_trace::{RecordReader, Trace};

/// Shape version of the JSON document.
pub const RANKS_REPORT_VERSION: u32 = 1;
/// Most rank pairs loaded at once.
pub const MAX_LOADED: usize = 4;
/// Bytes read to find a trace's header (the whole file when it is longer).
const HEADER_BYTES: u64 = 64 << 10;

/// The comparison of two multi-rank runs.
#[derive(Debug, Serialize)]
pub struct RanksReport {
    /// Shape version of this document.
    pub report_version: u32,
    /// The two run folders.
    pub a: String,
    /// See `a`.
    pub b: String,
    /// Each rank's comparison, by rank.
    pub ranks: Vec<RankReport>,
    /// Where the runs first parted across ranks: the earliest root cause,
    /// in time, that is not a collective; null when no rank has one.
    pub earliest_cause: Option<EarliestCause>,
}

/// One rank's comparison.
#[derive(Debug, Serialize)]
pub struct RankReport {
    /// The rank.
    pub rank: u32,
    /// Its report, as `diff --json` gives for one pair.
    pub report: Report,
    /// When its first root cause that is not a collective ran in run A
    /// (ns since the Unix epoch), if it has one.
    #[serde(skip)]
    own_cause_ns: Option<u64>,
    /// Its traces in run A and run B.
    #[serde(skip)]
    pub traces: (PathBuf, PathBuf),
}

/// The earliest cause across ranks.
#[derive(Debug, Serialize)]
pub struct EarliestCause {
    /// The rank it happened on.
    pub rank: u32,
    /// The divergence.
    pub divergence: DivergenceReport,
}

impl RanksReport {
    /// Whether every rank's results are shown to agree.
    pub fn results_agree(&self) -> bool {
        self.verdict().results_agree()
    }

    /// The rank a user looks at first: the earliest cause's, else the
    /// first whose results differ, else the first.
    pub fn rank_to_open(&self) -> Option<&RankReport> {
        let earliest = self.earliest_cause.as_ref().map(|c| c.rank);
        self.ranks
            .iter()
            .find(|r| Some(r.rank) == earliest)
            .or_else(|| {
                self.ranks
                    .iter()
                    .find(|r| !r.report.verdict.results_agree())
            })
            .or_else(|| self.ranks.first())
    }

    /// The verdict on the runs as a whole: divergent when a rank is,
    /// else inconclusive when a rank is, else benign when a rank is.
    pub fn verdict(&self) -> Verdict {
        let any = |v: Verdict| self.ranks.iter().any(|r| r.report.verdict == v);
        [Verdict::Divergent, Verdict::Inconclusive, Verdict::Benign]
            .into_iter()
            .find(|&v| any(v))
            .unwrap_or(Verdict::Identical)
    }
}

/// The rank traces of a run folder, by rank.
pub fn rank_traces(dir: &Path) -> anyhow::Result<BTreeMap<u32, PathBuf>> {
    let mut traces = BTreeMap::new();
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("{}: cannot read", dir.display()))?;
    for entry in entries {
        let path = entry
            .with_context(|| format!("{}: cannot read", dir.display()))?
            .path();
        if path.extension().is_none_or(|e| e != "msgpack") {
            continue;
        }
        let rank = rank_of(&path)?;
        if let Some(other) = traces.insert(rank, path.clone()) {
            anyhow::bail!(
                "{}: rank {rank} twice ({} and {})",
                dir.display(),
                other.display(),
                path.display()
            );
        }
    }
    if traces.is_empty() {
        anyhow::bail!("{}: no rank traces (*.msgpack) in it", dir.display());
    }
    Ok(traces)
}

/// The rank a trace's header names, else the number after `rank` in its
/// file name.
fn rank_of(path: &Path) -> anyhow::Result<u32> {
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(HEADER_BYTES).read_to_end(&mut head))
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let header = match RecordReader::open(path, &head) {
        Ok((header, _)) => header,
        Err(_) if head.len() as u64 == HEADER_BYTES => {
            let whole =
                std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
            RecordReader::open(path, &whole)?.0
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(place) = header.distributed {
        return Ok(place.rank);
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    stem.as_deref()
        .and_then(|s| s.rfind("rank").map(|i| &s[i + 4..]))
        .and_then(|digits| {
            let end = digits
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(digits.len());
            digits[..end].parse().ok()
        })
        .with_context(|| {
            format!(
                "{}: not a rank trace (its header names no rank, nor does its file name)",
                path.display()
            )
        })
}

/// The rank traces of run folders `a` and `b`, paired by rank: an error
/// when one run has a rank the other does not.
pub fn rank_pairs(a: &Path, b: &Path) -> anyhow::Result<Vec<(u32, PathBuf, PathBuf)>> {
    let (ranks_a, mut ranks_b) = (rank_traces(a)?, rank_traces(b)?);
    for (ranks, dir, other) in [(&ranks_a, a, &ranks_b), (&ranks_b, b, &ranks_a)] {
        if let Some(rank) = ranks.keys().find(|r| !other.contains_key(r)) {
            anyhow::bail!(
                "{}: has rank {rank}, which the other run does not",
                dir.display()
            );
        }
    }
    Ok(ranks_a
        .into_iter()
        .map(|(rank, path)| {
            let other = ranks_b.remove(&rank).expect("both runs have every rank");
            (rank, path, other)
        })
        .collect())
}

/// Compares run folders `a` and `b` rank by rank.
pub fn compare(a: &Path, b: &Path, options: Options, limit: usize) -> anyhow::Result<RanksReport> {
    compare_with_progress(a, b, options, limit, &|_, _| {})
}

/// [`compare`], telling `progress(done, total)` after each rank.
pub fn compare_with_progress(
    a: &Path,
    b: &Path,
    options: Options,
    limit: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> anyhow::Result<RanksReport> {
    let pairs = rank_pairs(a, b)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Each pair loads and compares on two threads of its own.
    let workers = (cores / 2).clamp(1, MAX_LOADED);
    let done = AtomicUsize::new(0);
    let ranks = in_parallel(&pairs, workers, |(rank, pa, pb)| {
        let report = compare_rank(*rank, pa, pb, options, limit);
        progress(done.fetch_add(1, Ordering::Relaxed) + 1, pairs.len());
        report
    })
    .into_iter()
    .collect::<anyhow::Result<Vec<_>>>()?;
    let earliest_cause = ranks
        .iter()
        .filter_map(|r| r.own_cause_ns.map(|ns| (ns, r)))
        .min_by_key(|(ns, r)| (*ns, r.rank))
        .and_then(|(_, r)| {
            own_cause(&r.report).map(|d| EarliestCause {
                rank: r.rank,
                divergence: d.clone(),
            })
        });
    Ok(RanksReport {
        report_version: RANKS_REPORT_VERSION,
        a: a.display().to_string(),
        b: b.display().to_string(),
        ranks,
        earliest_cause,
    })
}

/// `work` done on every item on at most `workers` threads, the results in
/// the items' order.
pub fn in_parallel<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|s| {
        for _ in 0..workers.clamp(1, items.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else {
                        break;
                    };
                    let result = work(item);
                    done.lock().expect("no worker panics").push((i, result));
                }
            });
        }
    });
    let mut done = done.into_inner().expect("no worker panics");
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// The first root cause of a rank's report that reaches the results and
/// did not come in through a collective.
fn own_cause(report: &Report) -> Option<&DivergenceReport> {
    report
        .root_causes
        .iter()
        .find(|d| d.kind != Kind::Collective && d.impact == Reach::ReachesResults)
}

/// One rank's pair, loaded, compared and dropped.
fn compare_rank(
    rank: u32,
    a: &Path,
    b: &Path,
    options: Options,
    limit: usize,
) -> anyhow::Result<RankReport> {
    let (ta, tb) = (Trace::open(a)?, Trace::open(b)?);
    let analysis = Analysis::run(&ta, &tb, options);
    let report = Report::new(&ta, &tb, &analysis, limit);
    let own_cause_ns = own_cause(&report).and_then(|d| {
        let seq = d.a_index?;
        let launch = ta.launches.iter().find(|l| l.seq == seq)?;
        Some(ta.header.created_ns + launch.ts)
    });
    Ok(RankReport {
        rank,
        report,
        own_cause_ns,
        traces: (a.to_owned(), b.to_owned()),
    })
}

/// The short human summary of `tritontui diff` on two run folders.
pub fn summary(report: &RanksReport) -> String {
    let divergent = report
        .ranks
        .iter()
        .filter(|r| r.report.verdict == Verdict::Divergent)
        .count();
    let mut out = format!(
        "A  {}  B  {}  {} ranks, {divergent} with results that differ\n",
        report.a,
        report.b,
        report.ranks.len()
    );
    for r in &report.ranks {
        let first = r
            .report
            .first_divergence
            .as_ref()
            .map_or(String::new(), |d| {
                format!(
                    "  first divergence {}  {}  {}",
                    crate::words::at_words(d.step, d.a_index, d.b_index),
                    d.kernel,
                    d.kind.as_str()
                )
            });
        out += &format!("rank {:<4} {}{first}\n", r.rank, r.report.verdict.as_str());
    }
    match &report.earliest_cause {
        Some(cause) => {
            let d = &cause.divergence;
            out += &format!(
                "\nearliest cause: rank {}  {}  {}  {}\n  {}\n",
                cause.rank,
                crate::words::at_words(d.step, d.a_index, d.b_index),
                d.kernel,
                d.kind.as_str(),
                d.detail
            );
        }
        None if divergent > 0 => {
            out += "\nno rank's divergence starts on that rank: each came in through a collective\n\
                 (`tritontui ranks` on each run checks whether its ranks' collectives agree)\n";
        }
        None => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tritontui_trace::{Distributed, Header, TraceWriter};

    /// An empty trace whose header names `rank` (or no rank).
    fn write_trace(path: &Path, rank: Option<u32>) {
        let mut header = Header::new("test");
        header.distributed = rank.map(|rank| Distributed {
            rank,
            world_size: 2,
            local_rank: rank,
            local_world_size: 2,
            node_rank: 0,
            run_id: "t".into(),
        });
        header.options.hash = "tthash64-v1".into();
        let file = std::fs::File::create(path).unwrap();
        TraceWriter::new(file, &header)
            .unwrap()
            .finish(0, "exit")
            .unwrap();
    }

    #[test]
    fn ranks_come_from_headers_else_from_file_names() {
        let dir = tempfile::tempdir().unwrap();
        write_trace(&dir.path().join("a.msgpack"), Some(1));
        write_trace(&dir.path().join("run-rank0.msgpack"), None);
        std::fs::write(dir.path().join("notes.txt"), "not a trace").unwrap();
        let ranks = rank_traces(dir.path()).unwrap();
        assert_eq!(ranks.keys().copied().collect::<Vec<_>>(), vec![0, 1]);
        assert!(ranks[&1].ends_with("a.msgpack"));
    }

    #[test]
    fn a_trace_without_a_rank_or_a_rank_twice_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        write_trace(&dir.path().join("plain.msgpack"), None);
        let err = rank_traces(dir.path()).unwrap_err().to_string();
        assert!(err.contains("plain.msgpack: not a rank trace"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        write_trace(&dir.path().join("x.msgpack"), Some(0));
        write_trace(&dir.path().join("y.msgpack"), Some(0));
        let err = rank_traces(dir.path()).unwrap_err().to_string();
        assert!(err.contains("rank 0 twice"), "{err}");
        let empty = tempfile::tempdir().unwrap();
        let err = rank_traces(empty.path()).unwrap_err().to_string();
        assert!(err.contains("no rank traces"), "{err}");
    }

    #[test]
    fn runs_with_different_ranks_are_an_error() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for rank in 0..2 {
            write_trace(&a.path().join(format!("rank{rank}.msgpack")), Some(rank));
        }
        write_trace(&b.path().join("rank0.msgpack"), Some(0));
        let err = compare(a.path(), b.path(), Options::default(), 10)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("has rank 1, which the other run does not"),
            "{err}"
        );
        write_trace(&b.path().join("rank1.msgpack"), Some(1));
        let report = compare(a.path(), b.path(), Options::default(), 10).unwrap();
        assert!(report.results_agree() && report.earliest_cause.is_none());
        assert_eq!(report.ranks.len(), 2);
    }
}

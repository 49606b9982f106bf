//! Two runs of several ranks in the UI (`tritontui run0 run1` on two
//! folders of rank traces): every rank's verdict, compared once when the
//! runs open, for the rank picker; one rank's pair is open at a time.

use crate::ranks::diff::{RanksReport, compare_with_progress};
use std::path::{Path, PathBuf};
use tritontui_engine::analysis::Options;

/// Every rank of the two runs, with its verdict.
#[derive(Debug)]
pub struct RankSet {
    /// The two run folders.
    pub runs: (PathBuf, PathBuf),
    /// Each rank, by rank.
    pub ranks: Vec<RankEntry>,
    /// The earliest cause's rank (`tritontui diff`'s, see `ranks::diff`).
    pub earliest_cause: Option<u32>,
    /// The rank to open first (`RanksReport::rank_to_open`).
    first_to_open: u32,
}

/// One rank in the picker.
#[derive(Debug)]
pub struct RankEntry {
    /// The rank.
    pub rank: u32,
    /// Its traces in run A and run B.
    pub traces: (PathBuf, PathBuf),
    /// Whether its results agree.
    pub agree: bool,
    /// Its verdict and first divergence in words.
    pub summary: String,
}

impl RankSet {
    /// Compares runs `a` and `b` rank by rank, telling `progress(done,
    /// total)` after each rank.
    pub fn compare(
        a: &Path,
        b: &Path,
        options: Options,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> anyhow::Result<RankSet> {
        // One divergence per rank is all the picker shows.
        let report = compare_with_progress(a, b, options, 1, progress)?;
        Ok(RankSet::from_report(a, b, report))
    }

    fn from_report(a: &Path, b: &Path, report: RanksReport) -> RankSet {
        let earliest_cause = report.earliest_cause.as_ref().map(|c| c.rank);
        let first_to_open = report.rank_to_open().map_or(0, |r| r.rank);
        let ranks = report
            .ranks
            .into_iter()
            .map(|r| {
                let verdict = r.report.verdict.as_str();
                let summary = match &r.report.first_divergence {
                    Some(d) => format!(
                        "{verdict:<10} {} {}  {}",
                        crate::words::index_words(d.a_index, d.b_index),
                        d.kernel,
                        d.kind.as_str()
                    ),
                    None => verdict.to_owned(),
                };
                RankEntry {
                    rank: r.rank,
                    agree: r.report.verdict.results_agree(),
                    summary,
                    traces: r.traces,
                }
            })
            .collect();
        RankSet {
            runs: (a.to_owned(), b.to_owned()),
            ranks,
            earliest_cause,
            first_to_open,
        }
    }

    /// The rank to open first: the earliest cause, else the first rank
    /// whose results differ, else the first rank.
    pub fn first_to_open(&self) -> u32 {
        self.first_to_open
    }

    /// The entry of `rank`.
    pub fn entry(&self, rank: u32) -> Option<&RankEntry> {
        self.ranks.iter().find(|r| r.rank == rank)
    }

    /// Where `rank` is in the list.
    pub fn position(&self, rank: u32) -> usize {
        self.ranks.iter().position(|r| r.rank == rank).unwrap_or(0)
    }
}

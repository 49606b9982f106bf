//! One run of `tritontui check` compared with the first: two traces, or,
//! for a program of several ranks, two folders of rank traces compared
//! rank by rank.

use crate::Report;
use crate::ranks::diff::{RankReport, RanksReport};
use std::path::{Path, PathBuf};
use tritontui_engine::Options;
use tritontui_engine::analysis::{Analysis, Verdict};
use tritontui_trace::Trace;

/// Most divergences a report lists.
const LIMIT: usize = 1000;

/// A run compared with the first.
pub(super) enum Comparison {
    /// Two runs of one process.
    Process(Box<Report>),
    /// Two runs of several ranks.
    Ranks(Box<RanksReport>),
}

impl Comparison {
    /// Compares the recording `other` with `first` (each a trace, or a
    /// folder of rank traces).
    pub(super) fn of(first: &Path, other: &Path, options: Options) -> anyhow::Result<Self> {
        Ok(match recordings(first, other)? {
            Recordings::Traces => {
                let (a, b) = (Trace::open(first)?, Trace::open(other)?);
                let analysis = Analysis::run(&a, &b, options);
                Self::Process(Box::new(Report::new(&a, &b, &analysis, LIMIT)))
            }
            Recordings::Ranks => Self::Ranks(Box::new(crate::ranks::diff::compare(
                first, other, options, LIMIT,
            )?)),
        })
    }

    /// The verdict on the two runs as a whole.
    pub(super) fn verdict(&self) -> Verdict {
        match self {
            Self::Process(report) => report.verdict,
            Self::Ranks(report) => report.verdict(),
        }
    }

    /// The one-process report, whose divergence values can be captured.
    pub(super) fn process(&self) -> Option<&Report> {
        match self {
            Self::Process(report) => Some(report),
            Self::Ranks(_) => None,
        }
    }

    /// Whether the runs differ anywhere or leave it open (worth showing).
    pub(super) fn worth_saying(&self) -> bool {
        match self {
            Self::Process(report) => {
                report.first_divergence.is_some() || report.verdict == Verdict::Inconclusive
            }
            Self::Ranks(report) => report.verdict() != Verdict::Identical,
        }
    }

    /// What `check` says of it: the report's summary; for ranks, each
    /// rank's verdict, then the summary of the rank to look at.
    pub(super) fn summary(&self) -> String {
        match self {
            Self::Process(report) => crate::output::summary(report),
            Self::Ranks(report) => {
                let mut text = crate::ranks::diff::summary(report);
                if let Some(rank) = rank_to_look_at(report) {
                    text += &format!("\nrank {}:\n", rank.rank);
                    text += &crate::output::summary(&rank.report);
                }
                text
            }
        }
    }

    /// The two traces to open in the UI: the runs', or the rank to look
    /// at's.
    pub(super) fn traces_to_show(&self, first: &Path, other: &Path) -> (PathBuf, PathBuf) {
        match self {
            Self::Ranks(report) => rank_to_look_at(report)
                .map(|rank| rank.traces.clone())
                .unwrap_or_else(|| (first.to_owned(), other.to_owned())),
            Self::Process(_) => (first.to_owned(), other.to_owned()),
        }
    }

    /// As JSON: `diff --json`'s report of the two runs, or of their ranks.
    pub(super) fn json(&self) -> serde_json::Value {
        match self {
            Self::Process(report) => serde_json::json!({ "report": report }),
            Self::Ranks(report) => serde_json::json!({ "ranks": report }),
        }
    }
}

/// The rank a user looks at first: the one where the earliest cause
/// happened, else the first whose verdict is not identical.
fn rank_to_look_at(report: &RanksReport) -> Option<&RankReport> {
    let earliest = report.earliest_cause.as_ref().map(|c| c.rank);
    report
        .ranks
        .iter()
        .find(|r| Some(r.rank) == earliest)
        .or_else(|| {
            report
                .ranks
                .iter()
                .find(|r| r.report.verdict != Verdict::Identical)
        })
}

/// What two recordings are.
enum Recordings {
    /// Two traces of one process each.
    Traces,
    /// Two folders of rank traces.
    Ranks,
}

/// Whether `first` and `other` are both traces or both folders of rank
/// traces; an error when the runs recorded differently.
fn recordings(first: &Path, other: &Path) -> anyhow::Result<Recordings> {
    match (first.is_dir(), other.is_dir()) {
        (false, false) => Ok(Recordings::Traces),
        (true, true) => Ok(Recordings::Ranks),
        (ranks_first, _) => {
            let (ranks, process) = if ranks_first {
                (first, other)
            } else {
                (other, first)
            };
            anyhow::bail!(
                "{}: one run recorded several ranks, but {} recorded one process; the program \
                 must start the same processes each run",
                ranks.display(),
                process.display()
            )
        }
    }
}

/// The pairs of traces to compare of two recordings: the two traces, or
/// each rank's (with its rank).
pub(super) fn trace_pairs(
    first: &Path,
    other: &Path,
) -> anyhow::Result<Vec<(Option<u32>, PathBuf, PathBuf)>> {
    Ok(match recordings(first, other)? {
        Recordings::Traces => vec![(None, first.to_owned(), other.to_owned())],
        Recordings::Ranks => crate::ranks::diff::rank_pairs(first, other)?
            .into_iter()
            .map(|(rank, a, b)| (Some(rank), a, b))
            .collect(),
    })
}

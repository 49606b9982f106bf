//! One run of `tritontui check` compared with the first: two traces, or,
//! for a program of several ranks, two folders of rank traces compared
//! rank by rank.

use crate::Report;
use crate::ranks::diff::RanksReport;
use crate::tui::load::Inputs;
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
    /// rank's verdict, then the summary of the rank to look at first.
    pub(super) fn summary(&self) -> String {
        match self {
            Self::Process(report) => crate::output::summary(report),
            Self::Ranks(report) => {
                let mut text = crate::ranks::diff::summary(report);
                if let Some(rank) = report.rank_to_open() {
                    text += &format!("\nrank {}:\n", rank.rank);
                    text += &crate::output::summary(&rank.report);
                }
                text
            }
        }
    }

    /// What the UI opens: the two traces, or the two run folders (with
    /// their rank picker, at the rank to look at first).
    pub(super) fn inputs(&self, first: &Path, other: &Path) -> Inputs {
        let (a, b) = (first.to_owned(), other.to_owned());
        match self {
            Self::Process(_) => Inputs::Two(a, b),
            Self::Ranks(_) => Inputs::Ranks(a, b),
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

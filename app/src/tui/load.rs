//! Loads what the UI shows on a background thread and reports progress,
//! so the screen never freezes on a large trace.

use super::comparison::{Comparison, RankPlace};
use super::ranks::RankSet;
use crate::loader::{DEMO_A, DEMO_B, LoadError, open_pair};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::Sender;
use tritontui_engine::analysis::Options;
use tritontui_trace::{Trace, TraceError};

/// What to open.
#[derive(Debug, Clone)]
pub enum Inputs {
    /// The demo pair built into the binary.
    Demo,
    /// One trace to browse.
    One(PathBuf),
    /// Two traces to compare.
    Two(PathBuf, PathBuf),
    /// Two folders of rank traces: every rank compared, then the rank
    /// where the runs first parted opened.
    Ranks(PathBuf, PathBuf),
    /// One rank of runs already compared rank by rank.
    Rank(Arc<RankSet>, u32),
}

/// Progress of a load.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// Bytes of file `file` (0 = A, 1 = B) decoded so far, of `total`.
    Reading {
        /// Which file.
        file: usize,
        /// Its name.
        name: String,
        /// Bytes done.
        done: u64,
        /// Bytes in all.
        total: u64,
    },
    /// Ranks compared so far, of `total`.
    Ranks {
        /// Ranks done.
        done: usize,
        /// Ranks in all.
        total: usize,
    },
    /// Aligning and classifying.
    Analysing,
}

/// A message from the loader.
pub enum LoadEvent {
    /// Progress so far.
    Progress(Progress),
    /// The comparison, or why it could not be made.
    Done(Result<Box<Comparison>, LoadError>),
}

/// Loads `inputs` on a new thread, sending events through `wrap` to `tx`.
pub fn spawn<M: Send + 'static>(
    inputs: Inputs,
    options: Options,
    tx: Sender<M>,
    wrap: fn(LoadEvent) -> M,
) {
    std::thread::spawn(move || {
        let send = |e| {
            let _ = tx.send(wrap(e));
        };
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            load(&inputs, options, &send)
        }))
        .unwrap_or(Err(LoadError::Internal));
        send(LoadEvent::Done(result.map(Box::new)));
    });
}

fn load(
    inputs: &Inputs,
    options: Options,
    send: &(impl Fn(LoadEvent) + Sync),
) -> Result<Comparison, LoadError> {
    let open = |file: usize, path: &Path| {
        let name = path.display().to_string();
        Trace::open_with_progress(path, |done, total| {
            send(LoadEvent::Progress(Progress::Reading {
                file,
                name: name.clone(),
                done,
                total,
            }));
        })
    };
    let (a, b) = match inputs {
        Inputs::Demo => {
            let a = Trace::from_bytes(Path::new("(built-in demo) run0.msgpack"), DEMO_A);
            let b = Trace::from_bytes(Path::new("(built-in demo) run1.msgpack"), DEMO_B);
            (a?, Some(b?))
        }
        Inputs::One(path) => (open(0, path)?, None),
        Inputs::Two(pa, pb) => {
            let (a, b) = open_pair(pa, pb, &open)?;
            (a, Some(b))
        }
        Inputs::Ranks(run_a, run_b) => {
            let progress = |done, total| send(LoadEvent::Progress(Progress::Ranks { done, total }));
            let set = RankSet::compare(run_a, run_b, options, &progress)
                .map_err(|e| LoadError::Ranks(format!("{e:#}")))?;
            let rank = set.first_to_open();
            return load_rank(Arc::new(set), rank, options, &open, send);
        }
        Inputs::Rank(set, rank) => return load_rank(Arc::clone(set), *rank, options, &open, send),
    };
    Ok(match b {
        Some(b) => {
            send(LoadEvent::Progress(Progress::Analysing));
            Comparison::pair(a, b, options)
        }
        None => Comparison::single(a),
    })
}

/// Opens rank `rank` of `set`.
fn load_rank(
    set: Arc<RankSet>,
    rank: u32,
    options: Options,
    open: &(impl Fn(usize, &Path) -> Result<Trace, TraceError> + Sync),
    send: &(impl Fn(LoadEvent) + Sync),
) -> Result<Comparison, LoadError> {
    let (pa, pb) = &set
        .entry(rank)
        .ok_or_else(|| LoadError::Ranks(format!("no rank {rank} in these runs")))?
        .traces;
    let (a, b) = open_pair(pa, pb, open)?;
    send(LoadEvent::Progress(Progress::Analysing));
    let mut comparison = Comparison::pair(a, b, options);
    comparison.rank = Some(RankPlace { set, rank });
    Ok(comparison)
}

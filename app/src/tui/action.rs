//! What can happen to the TUI ([`Action`], applied by `App::update`) and
//! what the event loop does in return ([`Effect`]).

use super::comparison::Comparison;
use super::highlight::{Highlighted, Request, SourceKey};
use super::load::{Inputs, Progress};
use crate::attach::Target;
use crossterm::event::MouseEvent;
use std::sync::Arc;

/// Everything that can happen to the app.
#[derive(Debug)]
pub enum Action {
    /// Move the focused pane by this many lines.
    Move(isize),
    /// Move the focused pane by a page.
    Page(isize),
    /// Go to the top of the focused pane.
    Top,
    /// Go to the bottom of the focused pane.
    Bottom,
    /// Select the next divergence.
    NextDivergence,
    /// Select the previous divergence.
    PrevDivergence,
    /// Select the next root cause (wrapping).
    NextRootCause,
    /// Select the first divergence.
    FirstDivergence,
    /// Jump to the producer of the selected launch's (divergent) input.
    Producer,
    /// Focus the next pane.
    CyclePane,
    /// Show or hide the source pane.
    ToggleSource,
    /// Show or hide the key help.
    ToggleHelp,
    /// Open the list of processes a debugger can attach to.
    OpenAttach,
    /// The attach targets, listed by the event loop.
    Targets(Vec<Target>),
    /// Move the highlighted attach target.
    AttachMove(isize),
    /// Attach a debugger to the highlighted target.
    AttachSelected,
    /// The debugger exited; what to tell the user.
    DebuggerDone(String),
    /// Open the rank picker (two runs of several ranks).
    OpenRanks,
    /// Move the highlighted rank.
    RanksMove(isize),
    /// Open the highlighted rank.
    RankChosen,
    /// Open the numerics of two programs (their aligned points).
    OpenNumerics,
    /// Move the highlighted aligned point.
    NumericsMove(isize),
    /// Open run B's launch of the highlighted point.
    NumericsChosen,
    /// Open the kernel search.
    OpenSearch,
    /// A character typed into the search box.
    SearchType(char),
    /// Backspace in the search box.
    SearchBackspace,
    /// Move the highlighted search result.
    SearchMove(isize),
    /// Jump to the next launch of the highlighted kernel.
    SearchAccept,
    /// Close what is open, or quit.
    Cancel,
    /// Leave.
    Quit,
    /// The terminal has a new size.
    Resize(u16, u16),
    /// A mouse event.
    Mouse(MouseEvent),
    /// Loading progress.
    Loading(Progress),
    /// The comparison is ready.
    Loaded(Box<Comparison>),
    /// Loading failed with this one-line message.
    LoadFailed(String),
    /// A source was highlighted.
    Highlighted(SourceKey, Highlighted),
    /// The worker found where the first input of row `from` came from.
    ProducerFound {
        /// The row the search started from.
        from: usize,
        /// The producer's row, if a recorded launch wrote the input.
        target: Option<usize>,
        /// What to tell the user.
        message: String,
    },
}

/// Work for the event loop to do after an update.
#[derive(Debug)]
pub enum Effect {
    /// Highlight a source on the worker.
    Highlight(Request),
    /// Find the producer of row `row`'s first input on a worker
    /// ([`super::app::producer_of_first_input`]) and report it as `ProducerFound`.
    FindProducer {
        /// The comparison to search.
        comparison: Arc<Comparison>,
        /// The row whose input to trace.
        row: usize,
    },
    /// List the attach targets of the comparison's traces and report them
    /// as `Targets`.
    ListTargets(Arc<Comparison>),
    /// Hand the terminal to a debugger attached to this target, take it
    /// back when the debugger exits, and report `DebuggerDone`.
    Debug(Target),
    /// Load these inputs in the background, reporting as the first load
    /// does (another rank of the same runs).
    Load(Inputs),
    /// Leave the TUI normally.
    Quit,
    /// Leave the TUI and print this error.
    Fail(String),
}

//! tritontui's engine: aligns the kernel launches of two recorded runs,
//! finds where they diverge, and explains why.
//!
//! Everything but the UI works without a terminal; `commands` is the
//! command line, which the binary and the Python package's `tritontui`
//! command both run.

pub mod align;
pub mod analysis;
pub mod attach;
pub mod autotuning;
pub mod commands;
pub mod compare;
pub mod compile_events;
pub mod cross_rank;
pub mod dump;
pub mod explain;
pub mod gaps;
pub mod html;
pub mod lint;
pub mod producer;
pub mod rank_diff;
pub mod report;
pub mod repro;
pub mod results;
pub mod settings;
pub mod signature;
pub mod source_language;
pub mod suspects;
pub mod synth;
pub mod tui;
pub mod values;

pub use analysis::{Analysis, Divergence, Kind, Options};
pub use report::Report;

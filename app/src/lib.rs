//! The tritontui app: the command line, the TUI and the outputs (reports,
//! HTML, dumps, values, repro scripts, lint, rank comparisons), built on
//! the engine (`tritontui-engine`), which does the analysis.
//!
//! Everything but the UI works without a terminal; `commands` is the
//! command line, which the binary and the Python package's `tritontui`
//! command both run.

pub mod attach;
pub mod commands;
pub mod dump;
pub mod lint;
pub mod loader;
pub mod output;
pub mod ranks;
pub mod repro;
pub mod source_language;
pub mod tui;
pub mod values;
pub mod words;

pub use output::Report;

//! tritontui's engine: aligns the kernel launches of two recorded runs,
//! finds where they diverge, and explains why.
//!
//! Everything here works without a terminal; the `tritontui` binary only
//! parses flags and prints.

pub mod align;
pub mod analysis;
pub mod attach;
pub mod compare;
pub mod dump;
pub mod explain;
pub mod html;
pub mod producer;
pub mod report;
pub mod signature;
pub mod suspects;
pub mod synth;
pub mod tui;

pub use analysis::{Analysis, Divergence, Kind, Options};
pub use report::Report;

//! tritontui's engine: aligns the kernel launches of two recorded runs,
//! compares each aligned pair, follows the data flow from launch to
//! launch, and finds where the runs diverge and why: facts, which the app
//! puts into words.
//! It reads traces through `tritontui-trace` and nothing else: the app's
//! commands, UI and outputs are built on it.

pub mod accuracy;
pub mod align;
pub mod analysis;
pub mod batch;
pub mod compare;
pub mod compile_events;
pub mod fingerprints;
pub mod gaps;
pub mod parallel;
pub mod producer;
pub mod programs;
pub mod results;
pub mod rows;
pub mod settings;
pub mod sides;
pub mod signature;
pub mod suspects;
pub mod trace_pair;

pub use analysis::{Analysis, Divergence, Kind, Options};
pub use sides::Sides;
pub use trace_pair::TracePair;

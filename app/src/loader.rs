//! Reading traces for the commands and the UI: two traces side by side,
//! the demo pair built into the binary, and one error type that names
//! the file.

use std::path::{Path, PathBuf};
use tritontui_trace::{Trace, TraceError};

/// Why the traces could not be loaded; each message is one line.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A trace is unreadable or malformed (the message names the file).
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The thread reading this trace crashed.
    #[error("{}: the reader crashed", .0.display())]
    ReaderCrashed(PathBuf),
    /// Two run folders could not be compared rank by rank (the message
    /// names the folder or trace).
    #[error("{0}")]
    Ranks(String),
    /// Loading crashed.
    #[error("internal error while loading the traces (a bug: please report it)")]
    Internal,
}

/// Run A of the bundled demo.
pub const DEMO_A: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../assets/demo/run0.msgpack"
));
/// Run B of the bundled demo.
pub const DEMO_B: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../assets/demo/run1.msgpack"
));

/// Reads traces `pa` and `pb` side by side (`open` is given 0 or 1 and
/// the path): the UI and the comparing commands both read pairs so.
pub fn open_pair(
    pa: &Path,
    pb: &Path,
    open: &(impl Fn(usize, &Path) -> Result<Trace, TraceError> + Sync),
) -> Result<(Trace, Trace), LoadError> {
    let (a, b) = tritontui_engine::parallel::side_by_side(|| open(0, pa), || open(1, pb));
    let a = a.map_err(|_| LoadError::ReaderCrashed(pa.to_owned()))??;
    Ok((a, b?))
}

//! The recorder: the `tritontui._native` Python module (feature `python`)
//! that reads launch arguments from torch and hashes them, on the device
//! (feature `cuda`) or the host, and the background thread that writes
//! the trace with `tritontui-trace`.

pub mod background;
#[cfg(feature = "cuda")]
pub mod gpu;
pub mod phases;
pub mod procs;
#[cfg(feature = "python")]
mod python;
pub mod recording;
pub mod stats;

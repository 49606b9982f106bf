//! The recording core: what the recorder keeps between launches, with no
//! Python in it, unit-tested without torch. The pyo3 layer (`python/`,
//! feature `python`) reads torch's tensors and calls into it.
//!
//! - `call_scope`: the compiled graph call running and the views whose
//!   hashes its launches inherit.
//! - `cuda_graphs`: the CUDA graph capture under way on each thread, the
//!   bytes each graph writes, and each graph's replays.
//! - `hashes`: when and on which stream a launch's device hashes run
//!   (deferred, beside a captured graph's launches, beside a graph call).

pub mod call_scope;
pub mod cuda_graphs;
pub mod hashes;

//! The device hash scheduler: when the hashes of a launch's device
//! arguments are enqueued, and on which stream, so that each reads the
//! bytes the launch read or left while costing the program as little as
//! it can. A launch's hashes before it run before it and those after it
//! after it, on its stream ([`LaunchHashes::dispatch`]), except where a
//! strategy may move them:
//!
//! - [`deferred`]: inside a graph call whose every launch is recorded,
//!   hashes wait across launches and are enqueued together, one table
//!   launch for many.
//! - [`captured`]: a launch captured into a CUDA graph inside such a call
//!   has its hashes join the next captured launch's, in one table kernel
//!   that runs beside the graph's launches.
//! - [`inputs_beside`]: a graph call's input hashes run on a side stream
//!   beside the call's launches.
//!
//! Each works on what a launch gives it ([`LaunchHashes`]: the byte ranges
//! its hashes read and it writes, its device batch, a token that keeps its
//! tensors alive) and on the device through [`Backend`]. The pyo3 layer
//! gives it torch's launches and `cuda` the GPU (feature `cuda`; built
//! without it the recorder hashes only on the host, where hashes are
//! computed as the launch is described and nothing is scheduled); the
//! tests give it a simulated device (`simulated`).
//!
//! A new strategy is one more module here, written against these two
//! traits and tested on the simulated device, and one call from the trace
//! file's state (`python/trace_file.rs`) at the moment it acts.

pub mod captured;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod deferred;
pub mod inputs_beside;
#[cfg(test)]
mod simulated;

use crate::background::{Fill, Pending};
use std::fmt::Display;
use tritontui_trace::Span;

/// Which device views of a launch [`LaunchHashes::spans`] gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Views {
    /// Those hashed before the launch.
    HashedBefore,
    /// Those hashed after it (every view but an allocation).
    HashedAfter,
    /// Those the launch writes.
    Written,
}

/// What the scheduler needs of one launch (or of one graph call's inputs):
/// where its hashes read, the device batch computing them, and a token
/// `K` that keeps its tensors alive while the hashes wait.
pub trait LaunchHashes<B: Backend, K> {
    /// The device index of its first device tensor, or -1.
    fn device(&self) -> i32;
    /// The stream it runs on, when it can be known (asked only when
    /// needed).
    fn stream(&self) -> Option<u64>;
    /// The byte ranges of the device views `which` picks.
    fn spans(&self, which: Views) -> Vec<Span>;
    /// Whether device hashes were asked of it (a batch begun, or failed to).
    fn has_device_work(&self) -> bool;
    /// Its device batch, unless there is none or the device failed.
    fn batch_mut(&mut self) -> Option<&mut B::Batch>;
    /// Its device batch, taken to be finished later; None when the device
    /// failed (the batch is then dropped, and its results with it).
    fn take_batch(&mut self) -> Option<Box<B::Batch>>;
    /// Where its batch's results go in its record, taken with the batch.
    fn take_fills(&mut self) -> Vec<Fill>;
    /// A new token keeping its tensors alive: their memory cannot be
    /// freed and reused (by anything, recorded or not) before a hash that
    /// waits reads it.
    fn keep_alive(&self) -> K;
    /// Marks its device work failed: its results are not trusted.
    fn device_failed(&mut self, error: String);
    /// Enqueues the hashes its batch gathered so far, on its stream (held
    /// hashes wait for the batch to be finished).
    fn dispatch(&mut self);
}

/// The device the hashes run on.
pub trait Backend: Sized + 'static {
    /// What a failed device call says.
    type Error: Display;
    /// One launch's hashes, on the launch's stream.
    type Batch: HashBatch<Self>;
    /// Hashes of several launches, gathered to be enqueued as one table.
    type Gathered: GatheredHashes<Self>;
    /// A captured launch's hashes carried to the next captured launch.
    type Carried: CarriedHashes<Self>;
    /// A captured CUDA graph's table of hash slots, with its side stream.
    type Table: GraphHashTable<Self>;
    /// A device's side stream, for hashes beside a graph call.
    type Side: SideStream<Self>;

    /// The side stream of device `ordinal`; None where it has none.
    fn side_of(ordinal: i32) -> Option<Self::Side>;
    /// Whether `stream` is capturing a CUDA graph (yes when unknown).
    fn capturing(stream: u64) -> bool;
}

/// One launch's hashes ([`Backend::Batch`]).
pub trait HashBatch<B: Backend> {
    /// The stream they run on.
    fn stream(&self) -> u64;
    /// The bytes its held hashes will read.
    fn waiting_bytes(&self) -> u64;
    /// Moves held hashes onto `stream`; false when it cannot.
    fn move_to(&mut self, stream: u64) -> bool;
    /// Empty gathered hashes for this batch's stream.
    fn gathered(&self) -> B::Gathered;
    /// Hands the hashes added since the last dispatch to `gathered`; false
    /// (nothing handed) when `gathered` is for another stream.
    fn hand_to(&mut self, gathered: &mut B::Gathered) -> bool;
    /// A captured batch's hashes not yet enqueued, to go with the next
    /// captured launch's; None for one not captured, or with none.
    fn carry(&mut self) -> Option<B::Carried>;
    /// Puts `carried` ahead of this batch's hashes when both are captured
    /// on one stream into one table; gives them back otherwise.
    fn join(&mut self, carried: B::Carried) -> Result<(), B::Carried>;
    /// Dispatches what is left; the results, once they are in.
    fn finish(self: Box<Self>) -> Result<Pending, B::Error>;
}

/// Hashes gathered from several launches ([`Backend::Gathered`]).
pub trait GatheredHashes<B: Backend> {
    /// How many.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Enqueues them as one table launch.
    fn enqueue(&mut self) -> Result<(), B::Error>;
}

/// Captured hashes carried to the next captured launch
/// ([`Backend::Carried`]).
pub trait CarriedHashes<B: Backend> {
    /// Enqueues them on their own, on the capturing stream.
    fn enqueue(self) -> Result<(), B::Error>;
    /// Enqueues them beside the graph's launches as fork `n` of their
    /// table (the outer error: no branch began; the inner: its kernels
    /// failed).
    fn enqueue_beside(self, n: usize) -> Result<Result<(), B::Error>, B::Error>;
    /// The table they write into.
    fn table(&self) -> B::Table;
    /// The stream they were captured on.
    fn stream(&self) -> u64;
}

/// A captured graph's table ([`Backend::Table`]).
pub trait GraphHashTable<B: Backend> {
    /// Whether hashes may run beside the graph's launches (it has a side
    /// stream).
    fn has_side(&self) -> bool;
    /// The stream its capture began on.
    fn origin(&self) -> u64;
    /// The capturing stream waits for fork `n` and every one before it.
    fn join(&self, n: usize) -> Result<(), B::Error>;
}

/// A device's side stream ([`Backend::Side`]).
pub trait SideStream<B: Backend>: Copy {
    /// Forks from `origin`: returns the stream work beside it goes on.
    fn fork(self, origin: u64) -> Result<u64, B::Error>;
    /// Marks the end of the work forked.
    fn end(self) -> Result<(), B::Error>;
    /// `stream` waits for the work forked.
    fn join(self, stream: u64) -> Result<(), B::Error>;
}

//! One value for each of the two runs compared: the one pair type of the
//! engine and the outputs (two traces, their gaps, their counts).

use serde::Serialize;

/// One value for each run: run A's and run B's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Sides<T> {
    /// Run A's.
    pub a: T,
    /// Run B's.
    pub b: T,
}

impl<T> Sides<T> {
    /// Run A's and run B's, each made by `f`.
    pub fn map<U>(&self, mut f: impl FnMut(&T) -> U) -> Sides<U> {
        Sides {
            a: f(&self.a),
            b: f(&self.b),
        }
    }
}

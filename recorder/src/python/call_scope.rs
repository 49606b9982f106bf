//! Which compiled graph call is running, and what is known of the views
//! its launches touched (`tritontui_trace::known_views`): inside one call
//! on one thread, a launch's hash before it is redundant when the same
//! view was hashed after the launch that last touched it (or on the
//! call's entry), and the trace marks it *inherited* instead.

use tritontui_trace::known_views::{KnownViews, Touched};

/// The graph calls in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Calls {
    None,
    /// One call, on this thread.
    One {
        thread: u64,
    },
    /// Calls nested or on several threads at once, or one whose launches
    /// are not all recorded (this many): nothing is inherited until all
    /// of them have ended.
    Several(u32),
}

/// The graph calls of one trace and what their launches touched.
pub struct CallScope {
    /// Whether hashes may be inherited at all: only when every launch
    /// inside a call is recorded (aten ops on, every kernel) and hashed
    /// before and after.
    pub enabled: bool,
    calls: Calls,
    /// Views whose hash after their last launch (or on entry) is coming.
    known: KnownViews<bool>,
}

impl CallScope {
    /// No call in progress, inheriting nothing until enabled.
    pub fn new() -> CallScope {
        CallScope {
            enabled: false,
            calls: Calls::None,
            known: KnownViews::default(),
        }
    }

    /// A graph call begins on `thread`, its inputs about to be recorded;
    /// `all_recorded` says whether every launch it makes will be (not so
    /// for a graph whose generated C++ launches its kernels): if not,
    /// nothing is inherited until it ends.
    pub fn begin(&mut self, thread: u64, all_recorded: bool) {
        self.known.clear();
        self.calls = match self.calls {
            Calls::None if all_recorded => Calls::One { thread },
            Calls::None => Calls::Several(1),
            Calls::One { .. } => Calls::Several(2),
            Calls::Several(n) => Calls::Several(n + 1),
        };
    }

    /// A graph call ended.
    pub fn end(&mut self) {
        self.calls = match self.calls {
            Calls::None | Calls::One { .. } | Calls::Several(1) => Calls::None,
            Calls::Several(n) => Calls::Several(n - 1),
        };
        if self.calls == Calls::None {
            self.known.clear();
        }
    }

    /// Whether a graph call is running (on any thread).
    pub fn running(&self) -> bool {
        self.calls != Calls::None
    }

    /// What a launch on `thread` may inherit from: the known views, while
    /// inheriting is on and a single call runs on this thread.
    pub fn inheritable(&self, thread: u64) -> Option<&KnownViews<bool>> {
        (self.enabled && self.calls == Calls::One { thread }).then_some(&self.known)
    }

    /// Whether what launches touch is kept: while inheriting is on and a
    /// single call runs (launches on any thread count: the reader
    /// replays every launch too).
    fn tracking(&self) -> bool {
        self.enabled && matches!(self.calls, Calls::One { .. })
    }

    /// A graph call's inputs as it recorded them (`inputs` is asked only
    /// while they are kept).
    pub fn inputs(&mut self, inputs: impl FnOnce() -> Vec<Touched<bool>>) {
        if self.tracking() {
            inputs().into_iter().for_each(|t| self.known.input(t));
        }
    }

    /// A launch's tensor arguments after it (`args` is asked only while
    /// they are kept: most launches run outside any graph call).
    pub fn after_launch(&mut self, args: impl FnOnce() -> Vec<Touched<bool>>) {
        if self.tracking() {
            self.known.after_launch(args());
        }
    }
}

//! Which compiled graph call is running, and what is known of the views
//! its launches touched (`tritontui_trace::known_views`): inside one call
//! on one thread, a launch's hash before it is redundant when the same
//! view was hashed after the launch that last touched it (or on the
//! call's entry), and the trace marks it *inherited* instead. A launch
//! captured into a CUDA graph inside such a call takes, for that hash,
//! the graph table slot the earlier captured launch's hash after it
//! writes at every replay: no hash kernel joins the graph for it.

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
    /// Views the launches captured into the current CUDA graph hashed after
    /// them: the table slot of that hash (None for a view left unhashed).
    captured: KnownViews<Option<u64>>,
}

impl Default for CallScope {
    fn default() -> Self {
        Self::new()
    }
}

impl CallScope {
    /// No call in progress, inheriting nothing until enabled.
    pub fn new() -> CallScope {
        CallScope {
            enabled: false,
            calls: Calls::None,
            known: KnownViews::default(),
            captured: KnownViews::default(),
        }
    }

    /// A graph call begins on `thread`, its inputs about to be recorded;
    /// `all_recorded` says whether every launch it makes will be (not so
    /// for a graph whose generated C++ launches its kernels): if not,
    /// nothing is inherited until it ends.
    pub fn begin(&mut self, thread: u64, all_recorded: bool) {
        self.known.clear();
        self.captured.clear();
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
        self.captured.clear();
    }

    /// A CUDA graph's capture begins or ends: no slot of another graph's
    /// table is shared.
    pub fn capture_boundary(&mut self) {
        self.captured.clear();
    }

    /// The table slots a launch on `thread` captured into the current
    /// graph may share, under the conditions of [`CallScope::inheritable`].
    pub fn captured_slots(&self, thread: u64) -> Option<&KnownViews<Option<u64>>> {
        (self.enabled && self.calls == Calls::One { thread }).then_some(&self.captured)
    }

    /// A captured launch's tensor arguments after it, with the slots of
    /// their hashes (`args` is asked only while they are kept).
    pub fn after_captured_launch(&mut self, args: impl FnOnce() -> Vec<Touched<Option<u64>>>) {
        if self.tracking() {
            self.captured.after_launch(args());
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

#[cfg(test)]
mod tests {
    use super::*;

    fn view(ptr: u64, slot: Option<u64>) -> Touched<Option<u64>> {
        Touched {
            ptr,
            extent: 64,
            key: 1,
            allocated: false,
            value: slot,
        }
    }

    #[test]
    fn a_captured_launch_shares_the_slot_of_the_last_captured_hash_of_its_view() {
        let mut scope = CallScope::new();
        scope.enabled = true;
        scope.begin(7, true);
        scope.after_captured_launch(|| vec![view(0x1000, Some(3)), view(0x2000, None)]);
        let slots = scope.captured_slots(7).expect("one call on this thread");
        assert_eq!(slots.get(0x1000, 1), Some(&Some(3)));
        assert_eq!(slots.get(0x2000, 1), Some(&None));
        // Another thread, or another view of the bytes, shares nothing.
        assert!(scope.captured_slots(8).is_none());
        assert_eq!(slots.get(0x1000, 2), None);
        // A later write through an overlapping view forgets the slot.
        scope.after_captured_launch(|| vec![view(0x1020, Some(5))]);
        let slots = scope.captured_slots(7).expect("one call on this thread");
        assert_eq!(slots.get(0x1000, 1), None);
        // A new capture shares no slot of the last graph's table.
        scope.capture_boundary();
        let slots = scope.captured_slots(7).expect("one call on this thread");
        assert_eq!(slots.get(0x1020, 1), None);
    }

    #[test]
    fn nothing_is_shared_where_nothing_may_be_inherited() {
        let mut scope = CallScope::new();
        scope.begin(7, true);
        scope.after_captured_launch(|| vec![view(0x1000, Some(3))]);
        assert!(scope.captured_slots(7).is_none(), "inheriting is off");
        scope.enabled = true;
        scope.end();
        scope.begin(7, false);
        scope.after_captured_launch(|| vec![view(0x1000, Some(3))]);
        assert!(scope.captured_slots(7).is_none(), "a call not all recorded");
    }
}

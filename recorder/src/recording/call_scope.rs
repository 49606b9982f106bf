//! Which compiled graph call (or optimizer step) is running, and what is
//! known of the views its launches touched
//! (`tritontui_trace::known_views`): inside one call on one thread, a
//! launch's hash before it is redundant when the same view was hashed
//! after the launch that last touched it (or on the call's entry), and
//! the trace marks it *inherited* instead.
//!
//! An optimizer's `step()` is such a scope too: it runs only torch ops on
//! the tensors it was handed, each recorded, so what one of its launches
//! left in a view is still there when the next reads it. Memory torch
//! fills where no op is recorded (`torch.tensor`'s new tensor, made with
//! dispatch modes kept out) is [`CallScope::forget`]ten. The reader needs
//! no word of these scopes: it follows every launch's views since the
//! last graph call began, which covers what the recorder knows here. A launch
//! captured into a CUDA graph inside such a call takes, for that hash,
//! the graph table slot the earlier captured launch's hash after it
//! writes at every replay: no hash kernel joins the graph for it.

use tritontui_trace::known_views::{KnownViews, Touched};

/// What is known of a view's bytes after the launch that last touched
/// them (or on a graph call's entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    /// Nothing: they were not hashed.
    Unhashed,
    /// Their hash is coming (from the device, filled in by the writer).
    Coming,
    /// Their hash, taken on the host.
    Hash(u64),
}

impl Known {
    /// Whether a launch reading the view may inherit its hash before.
    pub fn hashed(self) -> bool {
        self != Known::Unhashed
    }
}

/// The scopes in progress: graph calls and optimizer steps.
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
    /// How many of the scopes in progress are graph calls, and how many
    /// optimizer steps.
    graph_calls: u32,
    steps: u32,
    /// Views whose hash after their last launch (or on entry) is coming,
    /// or known.
    known: KnownViews<Known>,
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
            graph_calls: 0,
            steps: 0,
            known: KnownViews::default(),
            captured: KnownViews::default(),
        }
    }

    /// A graph call begins on `thread`, its inputs about to be recorded;
    /// `all_recorded` says whether every launch it makes will be (not so
    /// for a graph whose generated C++ launches its kernels): if not,
    /// nothing is inherited until it ends.
    pub fn begin(&mut self, thread: u64, all_recorded: bool) {
        self.graph_calls += 1;
        self.enter(thread, all_recorded);
    }

    /// A graph call ended.
    pub fn end(&mut self) {
        self.graph_calls = self.graph_calls.saturating_sub(1);
        self.leave();
    }

    /// An optimizer's `step()` begins on `thread`: its launches inherit as
    /// a graph call's do. Unlike a graph call's, the settings in force are
    /// sampled launch by launch ([`CallScope::running`] says no).
    pub fn begin_step(&mut self, thread: u64) {
        self.steps += 1;
        self.enter(thread, true);
    }

    /// An optimizer's `step()` ended (one whose beginning was not seen
    /// ends nothing).
    pub fn end_step(&mut self) {
        if self.steps > 0 {
            self.steps -= 1;
            self.leave();
        }
    }

    /// Bytes at `ptr` were written where no launch records it: views of
    /// them are not known any more.
    pub fn forget(&mut self, ptr: u64, extent: u64) {
        self.known.forget(ptr, extent);
        self.captured.forget(ptr, extent);
    }

    fn enter(&mut self, thread: u64, all_recorded: bool) {
        self.known.clear();
        self.captured.clear();
        self.calls = match self.calls {
            Calls::None if all_recorded => Calls::One { thread },
            Calls::None => Calls::Several(1),
            Calls::One { .. } => Calls::Several(2),
            Calls::Several(n) => Calls::Several(n + 1),
        };
    }

    fn leave(&mut self) {
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
        self.graph_calls > 0
    }

    /// What a launch on `thread` may inherit from: the known views, while
    /// inheriting is on and a single call runs on this thread.
    pub fn inheritable(&self, thread: u64) -> Option<&KnownViews<Known>> {
        (self.enabled && self.calls == Calls::One { thread }).then_some(&self.known)
    }

    /// Whether a launch on `thread` may defer its device hashes to a
    /// later launch's table (`hashes::deferred`): inside a single graph
    /// call only, where nothing but recorded launches runs. An optimizer
    /// step's ops may be followed by an op that writes unrecorded
    /// ([`CallScope::forget`] is told only after it).
    pub fn defers(&self, thread: u64) -> bool {
        self.steps == 0 && self.inheritable(thread).is_some()
    }

    /// Whether what launches touch is kept: while inheriting is on and a
    /// single call runs (launches on any thread count: the reader
    /// replays every launch too).
    fn tracking(&self) -> bool {
        self.enabled && matches!(self.calls, Calls::One { .. })
    }

    /// A graph call's inputs as it recorded them (`inputs` is asked only
    /// while they are kept).
    pub fn inputs(&mut self, inputs: impl FnOnce() -> Vec<Touched<Known>>) {
        if self.tracking() {
            inputs().into_iter().for_each(|t| self.known.input(t));
        }
    }

    /// A launch's tensor arguments after it (`args` is asked only while
    /// they are kept: most launches run outside any graph call).
    pub fn after_launch(&mut self, args: impl FnOnce() -> Vec<Touched<Known>>) {
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

    fn known(ptr: u64) -> Touched<Known> {
        Touched {
            ptr,
            extent: 64,
            key: 1,
            allocated: false,
            value: Known::Coming,
        }
    }

    #[test]
    fn an_optimizer_step_inherits_as_a_call_does_but_is_no_graph_call() {
        let mut scope = CallScope::new();
        scope.enabled = true;
        scope.begin_step(7);
        assert!(!scope.running(), "settings are sampled launch by launch");
        assert!(!scope.defers(7), "device hashes are not deferred");
        scope.after_launch(|| vec![known(0x1000), known(0x2000)]);
        let known_now = scope.inheritable(7).expect("one step on this thread");
        assert_eq!(known_now.get(0x1000, 1), Some(&Known::Coming));
        assert!(scope.inheritable(8).is_none(), "another thread");
        // Memory filled where nothing records it is not known any more.
        scope.forget(0x2000, 4);
        let known_now = scope.inheritable(7).expect("one step on this thread");
        assert_eq!(known_now.get(0x2000, 1), None);
        assert_eq!(known_now.get(0x1000, 1), Some(&Known::Coming));
        // A graph call inside the step: nothing is inherited until it ends,
        // nor after it, until the step ends.
        scope.begin(7, true);
        assert!(scope.running());
        assert!(scope.inheritable(7).is_none());
        scope.end();
        assert!(!scope.running());
        assert!(scope.inheritable(7).is_none());
        scope.end_step();
        assert!(scope.inheritable(7).is_none());
        // A step ended that was not seen to begin ends no graph call.
        scope.begin(7, true);
        scope.end_step();
        assert!(scope.running() && scope.inheritable(7).is_some());
        scope.end();
        // The next step knows nothing of the last one's views.
        scope.begin_step(7);
        let known_now = scope.inheritable(7).expect("one step on this thread");
        assert_eq!(known_now.get(0x1000, 1), None);
    }
}

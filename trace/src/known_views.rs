//! The views of memory whose bytes are known within one compiled graph
//! call: where a launch's hash before it can be taken from the data flow
//! instead of computed (format 1.5, the *inherited* flag).
//!
//! Inside a graph call only Inductor's generated wrapper runs, and with
//! aten ops recorded every write it makes is a recorded launch. So the
//! bytes a launch reads through a view were last hashed when the graph
//! was called (an input) or after the launch that last touched them,
//! unless some launch since touched overlapping bytes through another
//! view. The recorder uses this table to skip such hashes; the reader
//! fills them in from it. Both apply the same events in the same order
//! (see [`KnownViews::after_launch`]), so they agree.
//!
//! A view is known by its [`view_key`]: views reading the same bytes in
//! memory order share one (a hash is of the logical bytes alone, whatever
//! the shape or dtype), so a buffer written as `[4096, 1024]` and read as
//! `[8, 512, 1024]` is not read again (format 1.15).

use crate::format::LayoutDef;
use std::collections::BTreeMap;

/// Marks the [`view_key`]s of views read in memory order (layout ids are
/// small).
const IN_MEMORY_ORDER: u64 = 1 << 63;

/// The key a view is known by: any view reading its bytes once each in
/// memory order (row-major, back to back) shares one with every other
/// such view of the same extent at the same address, whatever its shape or
/// dtype, since its hash is the hash of those bytes alone; any other view
/// is known by its layout id only.
pub fn view_key(layout: u64, shape: &[u64], stride: &[i64], extent: u64) -> u64 {
    if LayoutDef::is_row_major(shape, stride) {
        IN_MEMORY_ORDER | extent
    } else {
        layout
    }
}

/// What is known of the views touched since the last graph call began,
/// with a value per view: the recorder keeps whether a hash of them is
/// coming, the reader the hash itself. The views kept never overlap
/// (setting one forgets those it overlaps), so they are kept by address
/// and an overlap is found in logarithmic time. An empty view holds no
/// bytes: it is never known and forgets nothing.
#[derive(Debug, Clone)]
pub struct KnownViews<T> {
    /// By address of the first byte.
    views: BTreeMap<u64, KnownView<T>>,
}

#[derive(Debug, Clone)]
struct KnownView<T> {
    end: u64,
    key: u64,
    value: T,
}

/// One tensor argument of a launch as [`KnownViews::after_launch`] needs it.
#[derive(Debug, Clone, Copy)]
pub struct Touched<T> {
    /// Address of the first element.
    pub ptr: u64,
    /// Bytes from the first element to one past the last.
    pub extent: u64,
    /// The view's [`view_key`].
    pub key: u64,
    /// The launch handed this memory out without writing it.
    pub allocated: bool,
    /// What is known of the view's bytes after the launch.
    pub value: T,
}

impl<T> Default for KnownViews<T> {
    fn default() -> Self {
        KnownViews {
            views: BTreeMap::new(),
        }
    }
}

impl<T> KnownViews<T> {
    /// Forgets everything: a graph call (or an optimizer step) begins, or
    /// ends.
    pub fn clear(&mut self) {
        self.views.clear();
    }

    /// What is known of the bytes of the view at `ptr` with [`view_key`]
    /// `key`.
    pub fn get(&self, ptr: u64, key: u64) -> Option<&T> {
        self.views
            .get(&ptr)
            .filter(|v| v.key == key)
            .map(|v| &v.value)
    }

    /// A graph input, as the call hashed it on entry.
    pub fn input(&mut self, touched: Touched<T>) {
        self.set(touched);
    }

    /// After a launch, each tensor argument in order: an allocation's
    /// bytes are unknown; any other argument's view holds what the launch
    /// left there (its hash after), and other views of overlapping bytes
    /// are forgotten.
    pub fn after_launch(&mut self, args: impl IntoIterator<Item = Touched<T>>) {
        for touched in args {
            if touched.allocated {
                self.forget(touched.ptr, touched.extent);
            } else {
                self.set(touched);
            }
        }
    }

    fn set(&mut self, touched: Touched<T>) {
        if touched.extent == 0 {
            return;
        }
        self.forget(touched.ptr, touched.extent);
        self.views.insert(
            touched.ptr,
            KnownView {
                end: touched.ptr.saturating_add(touched.extent),
                key: touched.key,
                value: touched.value,
            },
        );
    }

    /// Forgets the views overlapping `extent` bytes at `ptr` (bytes
    /// written where nothing records it).
    pub fn forget(&mut self, ptr: u64, extent: u64) {
        let end = ptr.saturating_add(extent);
        if extent == 0 {
            return;
        }
        // The views starting before `end`, last first: they overlap until
        // one ends at or before `ptr` (and all before it do too).
        let overlapping: Vec<u64> = self
            .views
            .range(..end)
            .rev()
            .take_while(|(_, v)| v.end > ptr)
            .map(|(&start, _)| start)
            .collect();
        for start in overlapping {
            self.views.remove(&start);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ptr: u64, extent: u64, key: u64, value: u64) -> Touched<u64> {
        Touched {
            ptr,
            extent,
            key,
            value,
            allocated: false,
        }
    }

    #[test]
    fn a_view_is_known_until_overlapping_bytes_are_touched() {
        let mut known = KnownViews::default();
        known.input(at(100, 16, 1, 7));
        assert_eq!(known.get(100, 1), Some(&7));
        assert_eq!(known.get(100, 2), None, "another view of the same bytes");
        // A launch reads the view and writes elsewhere.
        known.after_launch([at(100, 16, 1, 7), at(200, 8, 3, 9)]);
        assert_eq!((known.get(100, 1), known.get(200, 3)), (Some(&7), Some(&9)));
        // Another view of the same bytes is written: the first is forgotten.
        known.after_launch([at(104, 4, 4, 5)]);
        assert_eq!((known.get(100, 1), known.get(104, 4)), (None, Some(&5)));
        assert_eq!(
            known.get(200, 3),
            Some(&9),
            "bytes next to them are untouched"
        );
    }

    #[test]
    fn an_allocation_and_a_new_call_forget() {
        let mut known = KnownViews::default();
        known.after_launch([at(0, 64, 1, 1), at(64, 64, 1, 2)]);
        known.after_launch([Touched {
            allocated: true,
            ..at(32, 64, 9, 0)
        }]);
        assert_eq!((known.get(0, 1), known.get(64, 1)), (None, None));
        known.input(at(500, 8, 2, 3));
        known.clear();
        assert_eq!(known.get(500, 2), None);
    }

    #[test]
    fn empty_views_are_never_known_and_forget_nothing() {
        let mut known = KnownViews::default();
        known.input(at(100, 16, 1, 7));
        known.after_launch([at(116, 0, 2, 0), at(100, 0, 3, 0), at(108, 0, 4, 0)]);
        assert_eq!(known.get(100, 1), Some(&7));
        assert_eq!(known.get(100, 3), None);
        known.after_launch([at(112, 8, 5, 9)]);
        assert_eq!(known.get(100, 1), None, "a view overlapping its end");
    }

    #[test]
    fn overlaps_are_found_on_both_sides() {
        let mut known = KnownViews::default();
        known.after_launch([
            at(0, 10, 1, 1),
            at(10, 10, 1, 2),
            at(20, 10, 1, 3),
            at(40, 10, 1, 4),
        ]);
        // Spans the end of the first, the second whole, the start of the third.
        known.after_launch([at(5, 20, 2, 9)]);
        let left: Vec<_> = [(0, 1), (10, 1), (20, 1), (40, 1), (5, 2)]
            .iter()
            .map(|&(p, l)| known.get(p, l).copied())
            .collect();
        assert_eq!(left, vec![None, None, None, Some(4), Some(9)]);
    }

    #[test]
    fn views_in_memory_order_of_the_same_extent_share_a_key_and_others_do_not() {
        // The same 4096 x 1024 bf16 buffer written as one shape and read as another.
        let extent = 4096 * 1024 * 2;
        let flat = view_key(3, &[4096, 1024], &[1024, 1], extent);
        let batched = view_key(8, &[8, 512, 1024], &[524_288, 1024, 1], extent);
        assert_eq!(flat, batched);
        assert_ne!(flat, 3, "not a layout id");
        // The same bytes as bytes of another dtype: the same logical bytes.
        assert_eq!(view_key(9, &[extent], &[1], extent), flat);
        // Fewer bytes from the same address: another key.
        assert_ne!(view_key(4, &[2048, 1024], &[1024, 1], extent / 2), flat);
        // Transposed, or strided: its layout alone.
        assert_eq!(view_key(5, &[1024, 4096], &[1, 1024], extent), 5);
        assert_eq!(view_key(6, &[4096, 512], &[1024, 1], extent - 1024), 6);
        let mut known = KnownViews::default();
        known.input(at(100, extent, flat, 7));
        assert_eq!(known.get(100, batched), Some(&7));
        assert_eq!(known.get(100, 5), None, "the transposed view");
    }
}

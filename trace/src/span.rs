//! The bytes of one view on one device, `[start, end)`: the one byte-range
//! type the recorder (which writes a graph's or a launch's bytes) and the
//! trace's readers (which follow what wrote them) share.

/// The bytes `[start, end)` of device `device` (-1 for the host).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Device ordinal, -1 for the host.
    pub device: i32,
    /// The first byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
}

impl Span {
    /// The bytes `[start, end)` of `device`.
    pub fn new(device: i32, start: u64, end: u64) -> Span {
        Span { device, start, end }
    }

    /// Whether the two spans share a byte.
    pub fn overlaps(&self, other: &Span) -> bool {
        self.device == other.device && self.start < other.end && other.start < self.end
    }

    /// Whether any of `a` shares a byte with any of `b`.
    pub fn any_shared(a: &[Span], b: &[Span]) -> bool {
        a.iter().any(|x| b.iter().any(|y| x.overlaps(y)))
    }

    /// `spans` sorted, with spans that share a byte (or touch) made one.
    pub fn merged(mut spans: Vec<Span>) -> Vec<Span> {
        spans.sort_unstable_by_key(|s| (s.device, s.start));
        let mut merged: Vec<Span> = Vec::with_capacity(spans.len());
        for span in spans {
            match merged.last_mut() {
                Some(last) if last.device == span.device && span.start <= last.end => {
                    last.end = last.end.max(span.end);
                }
                _ => merged.push(span),
            }
        }
        merged
    }

    /// Whether any of `merged` (as [`Span::merged`] makes them) shares a
    /// byte with `span`.
    pub fn any_overlaps(merged: &[Span], span: &Span) -> bool {
        // The first span that ends past `span`'s start is the only one
        // that may share a byte with it.
        let i = merged.partition_point(|s| (s.device, s.end) <= (span.device, span.start));
        merged.get(i).is_some_and(|s| s.overlaps(span))
    }
}

#[cfg(test)]
mod tests {
    use super::Span;

    fn span(device: i32, start: u64, end: u64) -> Span {
        Span::new(device, start, end)
    }

    #[test]
    fn spans_are_shared_when_any_two_share_a_byte_on_one_device() {
        let reads = [span(0, 0, 100), span(0, 1000, 1100)];
        assert!(!Span::any_shared(&reads, &[]));
        assert!(!Span::any_shared(
            &reads,
            &[span(0, 100, 1000), span(0, 2000, 3000)]
        ));
        assert!(Span::any_shared(
            &reads,
            &[span(0, 2000, 3000), span(0, 1099, 1200)]
        ));
        assert!(Span::any_shared(&reads, &[span(0, 0, 1)]));
        assert!(
            !Span::any_shared(&reads, &[span(1, 0, 100)]),
            "the same addresses on another device"
        );
    }

    #[test]
    fn merged_spans_are_sorted_and_joined_where_they_share_or_touch_a_byte() {
        let merged = Span::merged(vec![
            span(0, 300, 400),
            span(1, 0, 50),
            span(0, 100, 200),
            span(0, 150, 250),
            span(0, 250, 260),
        ]);
        assert_eq!(
            merged,
            [span(0, 100, 260), span(0, 300, 400), span(1, 0, 50)]
        );
    }

    #[test]
    fn any_overlaps_finds_exactly_the_spans_sharing_a_byte() {
        let merged = Span::merged(vec![span(0, 100, 200), span(0, 300, 400), span(1, 0, 50)]);
        for (probe, expected) in [
            (span(0, 0, 100), false),
            (span(0, 199, 300), true),
            (span(0, 200, 300), false),
            (span(0, 250, 301), true),
            (span(0, 0, 1000), true),
            (span(0, 400, 500), false),
            (span(1, 49, 60), true),
            (span(1, 50, 60), false),
            (span(2, 0, 1000), false),
        ] {
            let brute = merged.iter().any(|s| s.overlaps(&probe));
            assert_eq!(brute, expected, "{probe:?}");
            assert_eq!(Span::any_overlaps(&merged, &probe), expected, "{probe:?}");
        }
    }
}

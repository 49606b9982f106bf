//! How the table kernel reads one view (`Item` and `Dims` in the PTX
//! source): contiguous bytes sixteen at a time; views whose rows are whole
//! words, in runs of words in the order of memory (`hash_words`), loaded
//! as words, pairs of words, elements or columns of a transposed matrix;
//! anything else element by element in logical order (`hash_strided`).
//!
//! The hash sums each word's mix keyed by the word's logical index, so the
//! order the device reads words in changes nothing but speed. Read in
//! logical order, the words of a permuted or transposed view lie rows apart
//! in memory, and a warp's loads touch as many rows as it has threads.

use super::driver::{GpuError, Result};
use smallvec::SmallVec;

/// Most dimensions a strided view may keep after merging.
pub const MAX_DIMS: usize = 6;

/// `Dims` in the PTX source.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    pub shape: [u64; MAX_DIMS],
    /// In elements (`hash_words`: in bytes).
    pub stride: [u64; MAX_DIMS],
    /// `hash_words` only: logical words per step along the dimension.
    pub weight: [u64; MAX_DIMS],
    /// `hash_words` only: the divisor of the dimension's digit (the
    /// innermost's: its runs), as [`divisor`] gives it.
    pub divisor: [u64; MAX_DIMS],
}

/// `LAYOUT_*` in the PTX source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Layout {
    /// Contiguous and 16-byte aligned; no dimensions.
    Contiguous = 0,
    /// Rows of whole words, in runs of words in the order of memory, each
    /// run loaded as its [`Read`] says.
    Words = 1,
    /// Contiguous and 16-byte aligned, in rows of whole 16-byte chunks,
    /// each row also hashed as the tensor it would be alone (`hash_rows`):
    /// its `Dims` hold, in `shape`, a row's bytes, the first row's result
    /// slot, the segments a row is cut into (a warp each), and whether the
    /// item's own slot takes the view's hash (`ROW_*` in the PTX source).
    Rows = 2,
    /// Anything else: element by element, in logical order.
    Strided = 3,
}

/// How [`Layout::Words`] loads a run of words (`READ_*` in the PTX
/// source).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Read {
    /// Each word one aligned 8-byte load.
    Words = 0,
    /// Two words side by side, one aligned 16-byte load; runs of 8, 4 or 2
    /// words ([`pairs_run`]).
    Pairs = 1,
    /// Each word gathered from elements `element_stride` bytes apart.
    Elements = 2,
    /// The words of a run are adjacent elements in memory (a transposed
    /// matrix read down its columns): `8 / itemsize` aligned loads,
    /// `element_stride` apart, the k-th holding every word's k-th element;
    /// 16-byte loads (runs of `16 / itemsize` words) where the columns are
    /// 16-byte aligned, else 8-byte loads (runs of `8 / itemsize`).
    Columns = 3,
}

/// How one view is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    pub layout: Layout,
    /// [`Layout::Words`]: how a run is loaded.
    pub read: Read,
    pub ndim: u32,
    pub dims: Dims,
    /// [`Read::Elements`] and [`Read::Columns`]: bytes between a word's
    /// elements.
    pub element_stride: u64,
    /// [`Layout::Words`]: words a thread reads per index computation,
    /// along the innermost dimension.
    pub run: u32,
}

/// Sizes or strides of a coalesced view.
pub type Extents = SmallVec<[u64; MAX_DIMS]>;

/// Drops size-1 dimensions and merges dimensions that are contiguous with
/// each other, so most views keep one to three.
pub fn coalesce(shape: &[u64], stride: &[u64]) -> (Extents, Extents) {
    let mut dims: SmallVec<[(u64, u64); MAX_DIMS]> = SmallVec::new();
    for (&n, &s) in shape.iter().zip(stride) {
        if n == 1 {
            continue;
        }
        match dims.last_mut() {
            Some(last) if last.1 == n * s => *last = (last.0 * n, s),
            _ => dims.push((n, s)),
        }
    }
    dims.into_iter().unzip()
}

/// The `Dims` parameter of a coalesced view, strides in elements.
pub fn dims(shape: &[u64], stride: &[u64]) -> Result<(i32, Dims)> {
    if shape.len() > MAX_DIMS {
        return Err(GpuError(format!(
            "a view of more than {MAX_DIMS} dimensions"
        )));
    }
    let mut dims = Dims {
        shape: [1; MAX_DIMS],
        stride: [0; MAX_DIMS],
        weight: [0; MAX_DIMS],
        divisor: [0; MAX_DIMS],
    };
    dims.shape[..shape.len()].copy_from_slice(shape);
    dims.stride[..stride.len()].copy_from_slice(stride);
    Ok((shape.len() as i32, dims))
}

/// How to read the view of `itemsize`-byte elements at `ptr` whose
/// coalesced dimensions are `shape` and `stride` (in elements).
pub fn reading(ptr: u64, itemsize: u64, shape: &[u64], stride: &[u64]) -> Result<Reading> {
    let contiguous =
        shape.len() <= 1 && stride.first().is_none_or(|&s| s == 1) && ptr.is_multiple_of(16);
    if contiguous {
        return Ok(Reading {
            layout: Layout::Contiguous,
            read: Read::Words,
            ndim: 0,
            dims: dims(&[], &[])?.1,
            element_stride: 0,
            run: 1,
        });
    }
    if let Some(reading) = words(ptr, itemsize, shape, stride) {
        return Ok(reading);
    }
    let (ndim, dims) = dims(shape, stride)?;
    Ok(Reading {
        layout: Layout::Strided,
        read: Read::Words,
        ndim: ndim as u32,
        dims,
        element_stride: 0,
        run: 1,
    })
}

/// The view as words in the order of memory, when its rows (the last
/// dimension) are whole words of elements of 1, 2, 4 or 8 bytes: the last
/// dimension splits into words of `8 / itemsize` elements, and the words'
/// dimensions are sorted by their stride in bytes, largest first, each
/// with its weight in logical words.
fn words(ptr: u64, itemsize: u64, shape: &[u64], stride: &[u64]) -> Option<Reading> {
    let n = shape.len();
    if n == 0 || n > MAX_DIMS || !matches!(itemsize, 1 | 2 | 4 | 8) {
        return None;
    }
    let per_word = 8 / itemsize;
    let last = shape[n - 1];
    if !last.is_multiple_of(per_word) {
        return None;
    }
    let mut word_dims: SmallVec<[(u64, u64, u64); MAX_DIMS]> = SmallVec::new();
    let mut weight = 1;
    word_dims.push((last / per_word, per_word * stride[n - 1] * itemsize, weight));
    weight *= last / per_word;
    for d in (0..n - 1).rev() {
        word_dims.push((shape[d], stride[d] * itemsize, weight));
        weight *= shape[d];
    }
    // One aligned load per word: the elements of a word are adjacent, and
    // every word starts on 8 bytes.
    let one_load =
        stride[n - 1] == 1 && ptr.is_multiple_of(8) && word_dims.iter().all(|d| d.1 % 8 == 0);
    if !one_load && itemsize == 8 {
        // An 8-byte element that is not 8-byte aligned.
        return None;
    }
    word_dims.retain(|d| d.0 > 1);
    if word_dims.is_empty() {
        // One word: the kernel still needs an innermost dimension.
        word_dims.push((1, 0, 0));
    }
    // Stable: equal strides (broadcast dimensions) keep their order.
    word_dims.sort_by_key(|d| std::cmp::Reverse(d.1));
    let (innermost, inner_stride, _) = word_dims[word_dims.len() - 1];
    let outer = &word_dims[..word_dims.len() - 1];
    // Whether every run of the innermost dimension starts on `bytes`.
    let runs_start_on =
        |bytes: u64| ptr.is_multiple_of(bytes) && outer.iter().all(|d| d.1.is_multiple_of(bytes));
    let element_stride = stride[n - 1] * itemsize;
    let (read, run) = if one_load {
        let pairs = inner_stride == 8 && innermost.is_multiple_of(2) && runs_start_on(16);
        if pairs {
            (Read::Pairs, pairs_run(innermost))
        } else {
            (Read::Words, if innermost.is_multiple_of(4) { 4 } else { 1 })
        }
    } else {
        let columns = inner_stride == itemsize
            && innermost.is_multiple_of(per_word)
            && element_stride.is_multiple_of(8)
            && runs_start_on(8);
        if columns {
            let wide = matches!(itemsize, 2 | 4)
                && innermost.is_multiple_of(16 / itemsize)
                && element_stride.is_multiple_of(16)
                && runs_start_on(16);
            (Read::Columns, if wide { 16 / itemsize } else { per_word })
        } else {
            (
                Read::Elements,
                if innermost.is_multiple_of(4) { 4 } else { 1 },
            )
        }
    };
    let mut dims = Dims {
        shape: [1; MAX_DIMS],
        stride: [0; MAX_DIMS],
        weight: [0; MAX_DIMS],
        divisor: [0; MAX_DIMS],
    };
    let last = word_dims.len() - 1;
    for (i, &(size, step, weight)) in word_dims.iter().enumerate() {
        dims.shape[i] = size;
        dims.stride[i] = step;
        dims.weight[i] = weight;
        dims.divisor[i] = divisor(if i == last { size / run } else { size });
    }
    Some(Reading {
        layout: Layout::Words,
        read,
        ndim: word_dims.len() as u32,
        dims,
        element_stride,
        run: run as u32,
    })
}

/// The longest run of pairs the innermost dimension's `words` divide
/// into: 8 words (four 16-byte loads for one index computation, as many
/// bytes in flight as the contiguous loop), else 4, else 2.
fn pairs_run(words: u64) -> u64 {
    [8, 4]
        .into_iter()
        .find(|&run| words.is_multiple_of(run))
        .unwrap_or(2)
}

/// `d` as the kernel divides by it: a multiplier `m` and a shift `k`,
/// packed as `m | k << 56`, with `n / d == (n * m) >> k` for every `n`
/// below 2^31 (`m` is 2^(32 + s) / d rounded up, 2^s the least power of
/// two not below `d`; the rounding adds less than 1/d to n/d). 0 (a
/// quotient of 0) for 0 and for `d` above 2^31.
pub fn divisor(d: u64) -> u64 {
    if d == 0 || d > 1 << 31 {
        return 0;
    }
    let s = u64::BITS - (d - 1).leading_zeros();
    let m = (1u128 << (32 + s)).div_ceil(u128::from(d)) as u64;
    m | u64::from(32 + s) << 56
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words' dimensions of a reading: (size, stride in bytes, weight).
    fn word_dims(r: &Reading) -> Vec<(u64, u64, u64)> {
        (0..r.ndim as usize)
            .map(|i| (r.dims.shape[i], r.dims.stride[i], r.dims.weight[i]))
            .collect()
    }

    #[test]
    fn contiguous_dimensions_merge() {
        let (shape, stride) = coalesce(&[2, 1, 3, 4], &[12, 99, 4, 1]);
        assert_eq!((&shape[..], &stride[..]), (&[24][..], &[1][..]));
        let (shape, stride) = coalesce(&[4, 3], &[1, 4]);
        assert_eq!((&shape[..], &stride[..]), (&[4, 3][..], &[1, 4][..]));
    }

    #[test]
    fn aligned_contiguous_views_are_read_sixteen_bytes_at_a_time() {
        let r = reading(0x1000, 4, &[100], &[1]).unwrap();
        assert_eq!((r.layout, r.ndim), (Layout::Contiguous, 0));
        // Misaligned by 8: whole words still, one load each.
        let r = reading(0x1008, 4, &[100], &[1]).unwrap();
        assert_eq!((r.layout, r.read), (Layout::Words, Read::Words));
        assert_eq!(word_dims(&r), vec![(50, 8, 1)]);
    }

    #[test]
    fn permuted_rows_are_read_in_the_order_of_memory() {
        // Attention's q of a packed qkv, bfloat16 (8, 16, 512, 64) with
        // strides (1572864, 64, 3072, 1): logically the 512 positions come
        // before the 64-element rows, in memory the 16 heads do.
        let r = reading(0x1000, 2, &[8, 16, 512, 64], &[1572864, 64, 3072, 1]).unwrap();
        assert_eq!((r.layout, r.read), (Layout::Words, Read::Pairs));
        assert_eq!(
            word_dims(&r),
            vec![
                (8, 3145728, 131072),
                (512, 6144, 16),
                (16, 128, 8192),
                (16, 8, 1)
            ]
        );
        assert_eq!(r.run, 8);
        // Rows of 16, 24 and 8 bfloat16 (4, 6 and 2 words): runs of 4, 2
        // and 2 words.
        for (row, run) in [(16, 4), (24, 2), (8, 2)] {
            let r = reading(0x1000, 2, &[4, 8, row], &[row, 4 * row, 1]).unwrap();
            assert_eq!((r.read, r.run), (Read::Pairs, run as u32), "rows of {row}");
            assert_eq!(word_dims(&r)[2], (row / 4, 8, 1));
        }
        // Rows starting 8 bytes past a 16-byte boundary: a word per load.
        let r = reading(0x1008, 2, &[8, 16, 512, 64], &[1572864, 64, 3072, 1]).unwrap();
        assert_eq!((r.read, r.run), (Read::Words, 4));
    }

    #[test]
    fn transposed_matrices_are_read_down_their_columns() {
        // weight.t() of a (3072, 1024) bfloat16 weight: words of 4 elements
        // 2048 bytes apart, consecutive threads on consecutive rows.
        let r = reading(0x1000, 2, &[1024, 3072], &[1, 1024]).unwrap();
        assert_eq!((r.layout, r.read), (Layout::Words, Read::Columns));
        assert_eq!(r.element_stride, 2048);
        assert_eq!(word_dims(&r), vec![(768, 8192, 1), (1024, 2, 768)]);
        // Eight rows a 16-byte load, runs of eight words.
        assert_eq!(r.run, 8);
        // float32: four rows a 16-byte load, runs of four words.
        let r = reading(0x1000, 4, &[1024, 4096], &[1, 1024]).unwrap();
        assert_eq!((r.read, r.run), (Read::Columns, 4));
        // Columns 8 bytes past a 16-byte boundary, or a row count that is
        // not a whole number of 16-byte loads: 8-byte loads.
        let r = reading(0x1008, 2, &[1024, 3072], &[1, 1024]).unwrap();
        assert_eq!((r.read, r.run), (Read::Columns, 4));
        let r = reading(0x1000, 2, &[1020, 3072], &[1, 1020]).unwrap();
        assert_eq!((r.read, r.run), (Read::Columns, 4));
        let r = reading(0x1000, 4, &[1022, 4096], &[1, 1022]).unwrap();
        assert_eq!((r.read, r.run), (Read::Columns, 2));
        // One-byte elements: 8-byte loads, runs of eight words.
        let r = reading(0x1000, 1, &[1024, 3072], &[1, 1024]).unwrap();
        assert_eq!((r.read, r.run), (Read::Columns, 8));
        // A column count that is not a whole number of runs, or a start
        // off 8 bytes: element by element.
        let r = reading(0x1000, 2, &[1022, 3072], &[1, 1022]).unwrap();
        assert_eq!(r.read, Read::Elements);
        let r = reading(0x1002, 2, &[1024, 3072], &[1, 1024]).unwrap();
        assert_eq!(r.read, Read::Elements);
    }

    #[test]
    fn rows_that_end_inside_a_word_are_read_by_elements() {
        for (ptr, itemsize, shape, stride) in [
            (0x1000, 2, &[4u64, 3][..], &[8u64, 1][..]),
            (0x1000, 2, &[1024, 37], &[1, 1024]),
            (0x1000, 16, &[4, 4], &[8, 1]),
            (0x1004, 8, &[4, 4], &[8, 1]),
        ] {
            let r = reading(ptr, itemsize, shape, stride).unwrap();
            assert_eq!(r.layout, Layout::Strided, "{shape:?} {stride:?}");
        }
        // Rows of whole words whose starts are not 8-byte aligned gather
        // their elements.
        let r = reading(0x1000, 2, &[4, 4], &[6, 1]).unwrap();
        assert_eq!((r.layout, r.read), (Layout::Words, Read::Elements));
        assert_eq!(word_dims(&r), vec![(4, 12, 1)]);
        // A single word keeps one dimension, of size 1; runs of 4 words
        // only where the innermost dimension divides by 4.
        let r = reading(0x1000, 2, &[4], &[3]).unwrap();
        assert_eq!((word_dims(&r), r.run), (vec![(1, 0, 0)], 1));
        let r = reading(0x1000, 2, &[6, 12], &[1, 6]).unwrap();
        assert_eq!((word_dims(&r), r.run), (vec![(3, 48, 1), (6, 2, 3)], 1));
    }

    #[test]
    fn divisors_divide_every_index_below_2_to_the_31() {
        let divide = |n: u64, packed: u64| (n * (packed & ((1 << 56) - 1))) >> (packed >> 56);
        let mut divisors: Vec<u64> = (1..=600).collect();
        divisors.extend([768, 1023, 1025, 3072, 65535, 65537, 1 << 20, 999_983]);
        divisors.extend([
            (1 << 31) - 1,
            1 << 31,
            (1 << 31) + 1,
            u64::from(u32::MAX),
            1 << 40,
        ]);
        let top = (1u64 << 31) - 1;
        for d in divisors {
            let packed = divisor(d);
            let mut ns = vec![0, 1, d - 1, d, d + 1, top, top - 1];
            ns.extend((1..=64).map(|k| k * d - 1).chain((1..=64).map(|k| k * d)));
            let q = top / d;
            ns.extend([(q * d).saturating_sub(1), q * d, q * d + d - 1]);
            ns.extend((0..2000).map(|i| (i * 1_073_741 + d * 7919) % (top + 1)));
            for n in ns.into_iter().filter(|&n| n <= top) {
                assert_eq!(divide(n, packed), n / d, "{n} / {d}");
            }
        }
    }

    #[test]
    fn too_many_dimensions_is_an_error() {
        let shape = [2; 7];
        let stride = [1, 3, 9, 27, 81, 243, 729];
        assert!(reading(0x1000, 1, &shape, &stride).is_err());
    }
}

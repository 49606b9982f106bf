//! `tthash64-v1`: an exact 64-bit hash of a tensor's logical bytes that
//! any number of threads (or a GPU) computes to the same value.
//!
//! The bytes are read as little-endian 64-bit words `w[i]` (the last one
//! zero-padded). Each word is mixed with its position and the results are
//! added modulo 2^64. Addition is associative and commutative, so partial
//! sums over any split of the words, combined in any order, give the same
//! total; the length goes into the finaliser so that trailing zero bytes
//! count. `docs/hashing.md` specifies it; `tests/hash_vectors.txt` pins it.
//!
//! ```text
//! k[i] = SEED + (i + 1) * STEP                       (mod 2^64)
//! x    = w[i] ^ k[i]
//! c[i] = (x mod 2^32) * (x >> 32) + rotl(x, 32)      (mod 2^64)
//! hash = fmix64(sum(c[i]) ^ (len * LEN_MUL))
//! ```

mod in_place;

/// Name of this algorithm in trace headers.
pub const ALGORITHM: &str = "tthash64-v1";

/// Key of word 0 is `SEED + STEP`.
pub const SEED: u64 = 0x243f_6a88_85a3_08d3;
/// Key increment per word.
pub const STEP: u64 = 0x9e37_79b9_7f4a_7c15;
/// Multiplier of the byte length in the finaliser.
pub const LEN_MUL: u64 = 0xc2b2_ae3d_27d4_eb4f;

/// One word's contribution.
#[inline(always)]
pub fn mix_word(word: u64, key: u64) -> u64 {
    let x = word ^ key;
    (x & 0xffff_ffff)
        .wrapping_mul(x >> 32)
        .wrapping_add(x.rotate_left(32))
}

/// MurmurHash3's 64-bit finaliser.
#[inline]
pub fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The key of word `index`.
#[inline]
pub fn key_of(index: u64) -> u64 {
    SEED.wrapping_add(index.wrapping_add(1).wrapping_mul(STEP))
}

/// A running sum over words, fed in pieces of any size at any word index.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sum {
    total: u64,
}

impl Sum {
    /// Adds the words of `bytes`, the first being word `first_word`.
    /// `bytes.len()` must be a multiple of 8 except for the last piece.
    pub fn add(&mut self, first_word: u64, bytes: &[u8]) {
        let (words, tail) = bytes.split_at(bytes.len() & !7);
        self.total = self.total.wrapping_add(sum_words(first_word, words));
        if !tail.is_empty() {
            let mut last = [0u8; 8];
            last[..tail.len()].copy_from_slice(tail);
            let index = first_word + (words.len() / 8) as u64;
            self.total = self
                .total
                .wrapping_add(mix_word(u64::from_le_bytes(last), key_of(index)));
        }
    }

    /// Adds whole words (`bytes.len() % 8 == 0`) that are words
    /// `first_word`, `first_word + step`, ... of the logical bytes.
    pub(crate) fn add_stepped(&mut self, first_word: u64, step: u64, bytes: &[u8]) {
        self.total = self
            .total
            .wrapping_add(sum_words_stepped(first_word, step, bytes));
    }

    /// Adds the whole words `first_word`, `first_word + step`, ... of the
    /// logical bytes whose word `i` is element `i` of `low` in its low half
    /// and element `i` of `high` in its high half (4-byte elements, as
    /// many in each): a column of words of a transposed view of 4-byte
    /// elements (see `in_place`), made and summed where they lie.
    pub(crate) fn add_pairs(&mut self, first_word: u64, step: u64, low: &[u8], high: &[u8]) {
        self.total = self
            .total
            .wrapping_add(sum_pairs(first_word, step, low, high));
    }

    /// Adds the rows (each `row_bytes`, a multiple of 32) that lie at each
    /// element of `outer` in `memory`, in its order: words 0, 1, ... of
    /// the logical bytes (a view whose innermost dimension is contiguous,
    /// see `in_place`). One row's words go on from the last one's, so the
    /// lanes and their keys go on across rows: a row of a few words costs
    /// no more than its words.
    pub(crate) fn add_rows(&mut self, memory: &[u8], outer: &View<'_>, row_bytes: usize) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2.
            let rows = unsafe { sum_rows_avx2(memory, outer, row_bytes) };
            self.total = self.total.wrapping_add(rows);
            return;
        }
        self.total = self.total.wrapping_add(sum_rows(memory, outer, row_bytes));
    }

    /// Combines partial sums computed elsewhere (other threads, a GPU).
    pub fn merge(&mut self, other: Sum) {
        self.total = self.total.wrapping_add(other.total);
    }

    /// The hash of `len` bytes whose words were all added.
    pub fn finish(self, len: u64) -> u64 {
        fmix64(self.total ^ len.wrapping_mul(LEN_MUL))
    }
}

/// Bytes from which [`sum_words`] asks whether the processor has AVX2 (a
/// cached answer, but not free beside a few words).
#[cfg(target_arch = "x86_64")]
const WIDE_FROM: usize = 64;

/// Sum of the contributions of whole words (`bytes.len() % 8 == 0`): in
/// 256-bit registers where the processor has AVX2, else in those of the
/// build's baseline (128-bit on x86-64). Addition modulo 2^64 does not
/// care about order, so every path gives the same sum. (Four lanes of
/// AVX2 hashed 3.4 times faster than the baseline on an AMD EPYC, 42
/// against 12.5 GB/s in cache; eight lanes, and sixteen with AVX-512,
/// were slower there.)
fn sum_words(first_word: u64, bytes: &[u8]) -> u64 {
    sum_words_stepped(first_word, 1, bytes)
}

/// Sum of the contributions of whole words (`bytes.len() % 8 == 0`) that
/// are words `first_word`, `first_word + step`, `first_word + 2 * step`,
/// ... of the logical bytes (consecutive words for `step` 1; one word of
/// each logical row for a transposed view's column, see `in_place`).
fn sum_words_stepped(first_word: u64, step: u64, bytes: &[u8]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if bytes.len() >= WIDE_FROM && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2.
        return unsafe { sum_words_avx2(first_word, step, bytes) };
    }
    sum_four_lanes(first_word, step, bytes)
}

/// [`sum_four_lanes`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sum_words_avx2(first_word: u64, step: u64, bytes: &[u8]) -> u64 {
    sum_four_lanes(first_word, step, bytes)
}

/// Sum of the contributions of whole words in four independent lanes,
/// which the compiler keeps in vector registers: word `i` of a chunk of
/// four in lane `i`, its key stepping by four words a chunk (words `step`
/// apart in the logical bytes).
#[inline(always)]
fn sum_four_lanes(first_word: u64, step: u64, bytes: &[u8]) -> u64 {
    let mut acc = [0u64; 4];
    let mut keys = [0u64; 4];
    for (lane, key) in keys.iter_mut().enumerate() {
        *key = key_of(first_word.wrapping_add((lane as u64).wrapping_mul(step)));
    }
    let step4 = STEP.wrapping_mul(step.wrapping_mul(4));
    let mut chunks = bytes.chunks_exact(32);
    for chunk in &mut chunks {
        for lane in 0..4 {
            let mut w = [0u8; 8];
            w.copy_from_slice(&chunk[lane * 8..lane * 8 + 8]);
            acc[lane] = acc[lane].wrapping_add(mix_word(u64::from_le_bytes(w), keys[lane]));
            keys[lane] = keys[lane].wrapping_add(step4);
        }
    }
    let mut total = acc.iter().fold(0u64, |a, &b| a.wrapping_add(b));
    for (lane, word) in chunks.remainder().chunks_exact(8).enumerate() {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        total = total.wrapping_add(mix_word(u64::from_le_bytes(w), keys[lane]));
    }
    total
}

/// Sum of the contributions of the words [`Sum::add_pairs`] makes of
/// `low` and `high` (of equal length, a multiple of 4): eight at a time in
/// AVX2 where the processor has it.
fn sum_pairs(first_word: u64, step: u64, low: &[u8], high: &[u8]) -> u64 {
    let count = low.len().min(high.len()) / 4;
    let mut total = 0u64;
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if count >= 8 && std::arch::is_x86_feature_detected!("avx2") {
        done = count / 8 * 8;
        // SAFETY: the processor has AVX2; both runs hold `done` elements.
        total = unsafe { sum_pairs_avx2(first_word, step, &low[..done * 4], &high[..done * 4]) };
    }
    for i in done..count {
        let element =
            |run: &[u8]| u32::from_le_bytes(run[i * 4..i * 4 + 4].try_into().expect("4 bytes"));
        let word = u64::from(element(low)) | (u64::from(element(high)) << 32);
        let key = key_of(first_word.wrapping_add((i as u64).wrapping_mul(step)));
        total = total.wrapping_add(mix_word(word, key));
    }
    total
}

/// [`sum_pairs`] of runs of a multiple of eight elements, eight words at a
/// time: interleaving eight elements of each run gives words 0, 1, 4, 5 in
/// one register and 2, 3, 6, 7 in another, whose keys step as theirs do.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sum_pairs_avx2(first_word: u64, step: u64, low: &[u8], high: &[u8]) -> u64 {
    use std::arch::x86_64::*;
    let key = |i: u64| key_of(first_word.wrapping_add(i.wrapping_mul(step))) as i64;
    let mut keys_a = _mm256_setr_epi64x(key(0), key(1), key(4), key(5));
    let mut keys_b = _mm256_setr_epi64x(key(2), key(3), key(6), key(7));
    let step8 = _mm256_set1_epi64x(STEP.wrapping_mul(step.wrapping_mul(8)) as i64);
    let mut acc_a = _mm256_setzero_si256();
    let mut acc_b = _mm256_setzero_si256();
    #[target_feature(enable = "avx2")]
    #[inline]
    fn mixed(words: __m256i, keys: __m256i) -> __m256i {
        let x = _mm256_xor_si256(words, keys);
        let product = _mm256_mul_epu32(x, _mm256_srli_epi64::<32>(x));
        _mm256_add_epi64(product, _mm256_shuffle_epi32::<0b10_11_00_01>(x))
    }
    for (low, high) in low.chunks_exact(32).zip(high.chunks_exact(32)) {
        // SAFETY: each chunk is 32 bytes; unaligned loads.
        let (l, h) = unsafe {
            (
                _mm256_loadu_si256(low.as_ptr().cast()),
                _mm256_loadu_si256(high.as_ptr().cast()),
            )
        };
        acc_a = _mm256_add_epi64(acc_a, mixed(_mm256_unpacklo_epi32(l, h), keys_a));
        acc_b = _mm256_add_epi64(acc_b, mixed(_mm256_unpackhi_epi32(l, h), keys_b));
        keys_a = _mm256_add_epi64(keys_a, step8);
        keys_b = _mm256_add_epi64(keys_b, step8);
    }
    let mut lanes = [0u64; 4];
    // SAFETY: `lanes` is 32 bytes.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), _mm256_add_epi64(acc_a, acc_b)) };
    lanes.iter().fold(0u64, |a, &b| a.wrapping_add(b))
}

/// Sum of the contributions of the rows [`Sum::add_rows`] adds, in four
/// lanes as [`sum_four_lanes`] sums one run of words. Its loop is
/// [`sum_four_lanes`]'s, not shared with it: the lanes kept in a struct
/// across rows hashed attention's heads 15-25% slower (3.0 against 2.4
/// us for 16 KB, 2026-12-03).
#[inline(always)]
fn sum_rows(memory: &[u8], outer: &View<'_>, row_bytes: usize) -> u64 {
    let mut acc = [0u64; 4];
    let mut keys: [u64; 4] = std::array::from_fn(|lane| key_of(lane as u64));
    let step4 = STEP.wrapping_mul(4);
    for_each_element(outer, |at| {
        for chunk in memory[at..at + row_bytes].chunks_exact(32) {
            for lane in 0..4 {
                let mut w = [0u8; 8];
                w.copy_from_slice(&chunk[lane * 8..lane * 8 + 8]);
                acc[lane] = acc[lane].wrapping_add(mix_word(u64::from_le_bytes(w), keys[lane]));
                keys[lane] = keys[lane].wrapping_add(step4);
            }
        }
    });
    acc.iter().fold(0u64, |a, &b| a.wrapping_add(b))
}

/// [`sum_rows`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sum_rows_avx2(memory: &[u8], outer: &View<'_>, row_bytes: usize) -> u64 {
    sum_rows(memory, outer, row_bytes)
}

/// The hash of a contiguous byte string.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut sum = Sum::default();
    sum.add(0, bytes);
    sum.finish(bytes.len() as u64)
}

/// A strided view of memory: element sizes and strides in elements, as
/// torch describes tensors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View<'a> {
    /// Bytes of one element.
    pub itemsize: usize,
    /// Sizes, outermost first.
    pub shape: &'a [usize],
    /// Strides in elements (non-negative).
    pub stride: &'a [usize],
}

impl View<'_> {
    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the elements lie back to back in row-major order.
    pub fn is_contiguous(&self) -> bool {
        let mut expected = 1;
        for (&n, &s) in self.shape.iter().zip(self.stride).rev() {
            if n != 1 && s != expected {
                return false;
            }
            expected *= n;
        }
        true
    }

    /// Bytes from the first element to one past the last.
    pub fn extent(&self) -> usize {
        if self.shape.contains(&0) {
            return 0;
        }
        let last: usize = self
            .shape
            .iter()
            .zip(self.stride)
            .map(|(&n, &s)| (n - 1) * s)
            .sum();
        (last + 1) * self.itemsize
    }
}

/// Bytes gathered at a time from a strided view.
const GATHER: usize = 64 << 10;
/// Columns of a transposed matrix gathered side by side.
const TILE: usize = 16;

/// Hashes the logical bytes of `view` laid over `memory` (which starts at
/// the view's first element and is at least `view.extent()` long).
pub fn hash_view(memory: &[u8], view: &View<'_>) -> u64 {
    let total = (view.numel() * view.itemsize) as u64;
    if view.is_contiguous() {
        return hash_bytes(&memory[..total as usize]);
    }
    if let Some(sum) = in_place::sum(memory, view) {
        return sum.finish(total);
    }
    let mut gather = Gather {
        sum: Sum::default(),
        buffer: Vec::with_capacity(GATHER + view.itemsize),
        word: 0,
    };
    let dims = view.shape.len();
    if dims >= 2 && view.stride[dims - 2] < view.stride[dims - 1] {
        // Transposed innermost dimensions: elements of one logical row lie
        // far apart, those of one column close together. Gather whole rows
        // a block at a time, reading memory down the columns.
        let outer = View {
            itemsize: view.itemsize,
            shape: &view.shape[..dims - 2],
            stride: &view.stride[..dims - 2],
        };
        let matrix = Matrix {
            rows: view.shape[dims - 2],
            cols: view.shape[dims - 1],
            row_stride: view.stride[dims - 2] * view.itemsize,
            col_stride: view.stride[dims - 1] * view.itemsize,
        };
        for_each_element(&outer, |base| match view.itemsize {
            1 => gather.matrix::<1>(memory, base, &matrix),
            2 => gather.matrix::<2>(memory, base, &matrix),
            4 => gather.matrix::<4>(memory, base, &matrix),
            8 => gather.matrix::<8>(memory, base, &matrix),
            _ => gather.matrix_any(memory, base, &matrix, view.itemsize),
        });
    } else {
        for_each_element(view, |offset| {
            gather.push(&memory[offset..offset + view.itemsize]);
        });
    }
    gather.finish(total)
}

/// The two innermost dimensions of a view, strides in bytes.
struct Matrix {
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

/// Logical bytes gathered from a strided view, summed a buffer at a time.
struct Gather {
    sum: Sum,
    /// Gathered bytes not summed yet (less than a word once flushed).
    buffer: Vec<u8>,
    /// The word index of the buffer's first byte.
    word: u64,
}

impl Gather {
    fn push(&mut self, element: &[u8]) {
        self.buffer.extend_from_slice(element);
        if self.buffer.len() >= GATHER {
            self.flush();
        }
    }

    /// Sums the buffer's whole words.
    fn flush(&mut self) {
        let whole = self.buffer.len() & !7;
        self.sum.add(self.word, &self.buffer[..whole]);
        self.word += (whole / 8) as u64;
        self.buffer.drain(..whole);
    }

    /// Gathers one matrix at `base` in logical order, blocks of whole rows
    /// at a time, each block filled [`TILE`] columns at a time so that the
    /// memory under those columns is read a cache line at a time.
    fn matrix<const N: usize>(&mut self, memory: &[u8], base: usize, m: &Matrix) {
        let row_bytes = m.cols * N;
        // Enough rows that each column's cache line is read whole.
        let block = (GATHER / row_bytes.max(1)).max(64 / N);
        for first in (0..m.rows).step_by(block) {
            let rows = block.min(m.rows - first);
            let start = self.buffer.len();
            self.buffer.resize(start + rows * row_bytes, 0);
            let out = &mut self.buffer[start..];
            for tile in (0..m.cols).step_by(TILE) {
                let width = TILE.min(m.cols - tile);
                for r in 0..rows {
                    let row = base + (first + r) * m.row_stride + tile * m.col_stride;
                    let to = r * row_bytes + tile * N;
                    for c in 0..width {
                        let from = row + c * m.col_stride;
                        let element: &[u8; N] = memory[from..from + N].try_into().expect("N bytes");
                        out[to + c * N..to + c * N + N].copy_from_slice(element);
                    }
                }
            }
            self.flush();
        }
    }

    /// [`Gather::matrix`] for an element size with no specialisation.
    fn matrix_any(&mut self, memory: &[u8], base: usize, m: &Matrix, itemsize: usize) {
        for r in 0..m.rows {
            for c in 0..m.cols {
                let at = base + r * m.row_stride + c * m.col_stride;
                self.push(&memory[at..at + itemsize]);
            }
        }
    }

    fn finish(mut self, total: u64) -> u64 {
        let rest = std::mem::take(&mut self.buffer);
        self.sum.add(self.word, &rest);
        self.sum.finish(total)
    }
}

/// Calls `visit(byte offset)` for every element in row-major order.
pub fn for_each_element(view: &View<'_>, mut visit: impl FnMut(usize)) {
    if view.shape.contains(&0) {
        return;
    }
    let dims = view.shape.len();
    if dims == 0 {
        visit(0);
        return;
    }
    let mut index = vec![0usize; dims];
    let mut offset = 0usize;
    loop {
        // The innermost dimension in one tight loop.
        let inner_stride = view.stride[dims - 1] * view.itemsize;
        for k in 0..view.shape[dims - 1] {
            visit(offset + k * inner_stride);
        }
        // Carry into the outer dimensions.
        let mut d = dims - 1;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            offset += view.stride[d] * view.itemsize;
            if index[d] < view.shape[d] {
                break;
            }
            offset -= index[d] * view.stride[d] * view.itemsize;
            index[d] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The definition, word by word, with no lanes or pieces.
    fn reference(bytes: &[u8]) -> u64 {
        let mut total = 0u64;
        for (i, chunk) in bytes.chunks(8).enumerate() {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            total = total.wrapping_add(mix_word(u64::from_le_bytes(w), key_of(i as u64)));
        }
        fmix64(total ^ (bytes.len() as u64).wrapping_mul(LEN_MUL))
    }

    proptest! {
        #[test]
        fn any_split_into_pieces_gives_the_definition(bytes in prop::collection::vec(any::<u8>(), 0..600), cuts in prop::collection::vec(0usize..75, 0..6)) {
            let expected = reference(&bytes);
            prop_assert_eq!(hash_bytes(&bytes), expected);
            // Split at word boundaries into pieces summed in reverse order.
            let mut bounds: Vec<usize> = cuts.iter().map(|c| (c * 8).min(bytes.len() & !7)).collect();
            bounds.push(0);
            bounds.push(bytes.len());
            bounds.sort_unstable();
            bounds.dedup();
            let mut sum = Sum::default();
            for pair in bounds.windows(2).rev() {
                let mut part = Sum::default();
                part.add((pair[0] / 8) as u64, &bytes[pair[0]..pair[1]]);
                sum.merge(part);
            }
            prop_assert_eq!(sum.finish(bytes.len() as u64), expected);
        }

        #[test]
        #[cfg(target_arch = "x86_64")]
        fn the_avx2_path_sums_as_the_baseline_does(words in prop::collection::vec(any::<u64>(), 0..200), first_word in any::<u64>()) {
            if std::arch::is_x86_feature_detected!("avx2") {
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                // SAFETY: the processor has AVX2.
                let wide = unsafe { sum_words_avx2(first_word, 1, &bytes) };
                prop_assert_eq!(wide, sum_four_lanes(first_word, 1, &bytes));
            }
        }

        #[test]
        fn pairs_of_runs_sum_the_words_they_make(pairs in prop::collection::vec(any::<(u32, u32)>(), 0..100), first_word in any::<u64>(), step in any::<u64>()) {
            let low: Vec<u8> = pairs.iter().flat_map(|p| p.0.to_le_bytes()).collect();
            let high: Vec<u8> = pairs.iter().flat_map(|p| p.1.to_le_bytes()).collect();
            let words = pairs.iter().enumerate().fold(0u64, |total, (i, &(l, h))| {
                let key = key_of(first_word.wrapping_add((i as u64).wrapping_mul(step)));
                total.wrapping_add(mix_word(u64::from(l) | (u64::from(h) << 32), key))
            });
            prop_assert_eq!(sum_pairs(first_word, step, &low, &high), words);
        }

        #[test]
        fn a_strided_view_hashes_its_own_elements(rows in 1usize..9, cols in 1usize..9, itemsize in prop::sample::select(vec![1usize, 2, 4, 8, 16])) {
            // A transposed view of a rows x cols matrix.
            let memory: Vec<u8> = (0..rows * cols * itemsize).map(|i| (i * 7 + 3) as u8).collect();
            let shape = [cols, rows];
            let stride = [1, cols];
            let view = View { itemsize, shape: &shape, stride: &stride };
            let mut gathered = Vec::new();
            for c in 0..cols {
                for r in 0..rows {
                    let at = (r * cols + c) * itemsize;
                    gathered.extend_from_slice(&memory[at..at + itemsize]);
                }
            }
            prop_assert_eq!(hash_view(&memory, &view), reference(&gathered));
        }

        #[test]
        fn a_permuted_batch_hashes_its_own_elements(batch in 1usize..4, rows in 1usize..9, cols in 1usize..9, itemsize in prop::sample::select(vec![1usize, 2, 4, 8, 16])) {
            // Each matrix of a batch transposed: shape (batch, cols, rows).
            let memory: Vec<u8> = (0..batch * rows * cols * itemsize).map(|i| (i * 13 + 5) as u8).collect();
            let shape = [batch, cols, rows];
            let stride = [rows * cols, 1, cols];
            let view = View { itemsize, shape: &shape, stride: &stride };
            let mut gathered = Vec::new();
            for_each_element(&view, |at| gathered.extend_from_slice(&memory[at..at + itemsize]));
            prop_assert_eq!(hash_view(&memory, &view), reference(&gathered));
        }
    }

    /// A view of `memory` as torch makes one: dimensions `sizes`, laid
    /// out in the order `order` (outermost first), each padded by `pad`
    /// elements (a slice of a wider tensor).
    fn laid_out(sizes: &[usize], order: &[usize], pad: &[usize]) -> Vec<usize> {
        let mut stride = vec![0; sizes.len()];
        let mut step = 1;
        for &d in order.iter().rev() {
            stride[d] = step;
            step *= sizes[d] + pad[d];
        }
        stride
    }

    proptest! {
        #[test]
        fn any_permuted_padded_view_hashes_its_own_elements(
            sizes in prop::collection::vec(1usize..7, 1..5),
            shuffle in any::<u64>(),
            pads in prop::collection::vec(prop::sample::select(vec![0usize, 0, 1, 3]), 4),
            itemsize in prop::sample::select(vec![1usize, 2, 4, 8, 16]),
        ) {
            let dims = sizes.len();
            let mut order: Vec<usize> = (0..dims).collect();
            let mut seed = shuffle;
            for i in (1..dims).rev() {
                order.swap(i, (seed % (i as u64 + 1)) as usize);
                seed /= i as u64 + 1;
            }
            let stride = laid_out(&sizes, &order, &pads[..dims]);
            let view = View { itemsize, shape: &sizes, stride: &stride };
            let memory: Vec<u8> = (0..view.extent()).map(|i| (i * 37 + 11) as u8).collect();
            let mut gathered = Vec::new();
            for_each_element(&view, |at| gathered.extend_from_slice(&memory[at..at + itemsize]));
            prop_assert_eq!(hash_view(&memory, &view), reference(&gathered));
        }
    }

    #[test]
    fn transposed_and_split_views_are_summed_where_they_lie() {
        // A Linear's weight read transposed in its backward, float32 and
        // bfloat16; heads split off a fused projection ([8, 2, 16, 16] of
        // a [8, 16, 96] buffer); a column of words across whole rows;
        // broadcast rows and columns (stride 0).
        let cases: [(usize, &[usize], &[usize]); 6] = [
            (4, &[2048, 128], &[1, 2048]),
            (2, &[640, 96], &[1, 640]),
            (4, &[8, 2, 16, 16], &[1536, 16, 96, 1]),
            (8, &[3, 700, 5], &[3500, 1, 700]),
            (4, &[6, 16], &[0, 1]),
            (4, &[5, 8], &[1, 0]),
        ];
        for (itemsize, shape, stride) in cases {
            let view = View {
                itemsize,
                shape,
                stride,
            };
            let memory: Vec<u8> = (0..view.extent()).map(|i| (i * 29 + 1) as u8).collect();
            let summed = in_place::sum(&memory, &view).expect("a layout summed in place");
            let mut gathered = Vec::new();
            for_each_element(&view, |at| {
                gathered.extend_from_slice(&memory[at..at + itemsize])
            });
            assert_eq!(
                summed.finish(gathered.len() as u64),
                reference(&gathered),
                "{shape:?} {stride:?}"
            );
        }
    }

    #[test]
    fn a_transposed_matrix_larger_than_one_gather_hashes_its_own_elements() {
        for (rows, cols) in [(300, 301), (1, 40_000), (40_000, 3)] {
            let memory: Vec<u8> = (0..rows * cols * 4).map(|i| (i * 31 + 7) as u8).collect();
            let shape = [cols, rows];
            let stride = [1, cols];
            let view = View {
                itemsize: 4,
                shape: &shape,
                stride: &stride,
            };
            let mut gathered = Vec::new();
            for_each_element(&view, |at| gathered.extend_from_slice(&memory[at..at + 4]));
            assert_eq!(
                hash_view(&memory, &view),
                reference(&gathered),
                "{rows}x{cols}"
            );
        }
    }

    #[test]
    fn position_and_length_matter() {
        assert_ne!(
            hash_bytes(&[1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0]),
            hash_bytes(&[0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8])
        );
        assert_ne!(hash_bytes(&[0; 3]), hash_bytes(&[0; 4]));
        assert_ne!(hash_bytes(&[]), hash_bytes(&[0]));
        // Two equal words swapped with two others: a pure sum of word
        // values would not see it.
        let a = [1u64, 2, 3, 4]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect::<Vec<_>>();
        let b = [2u64, 1, 4, 3]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect::<Vec<_>>();
        assert_ne!(hash_bytes(&a), hash_bytes(&b));
    }

    #[test]
    fn zero_dim_and_empty_views() {
        let one = [7u8, 0, 0, 0];
        assert_eq!(
            hash_view(
                &one,
                &View {
                    itemsize: 4,
                    shape: &[],
                    stride: &[]
                }
            ),
            hash_bytes(&one)
        );
        assert_eq!(
            hash_view(
                &[],
                &View {
                    itemsize: 4,
                    shape: &[0, 3],
                    stride: &[3, 1]
                }
            ),
            hash_bytes(&[])
        );
        // A broadcast (stride 0) view repeats its element.
        let view = View {
            itemsize: 4,
            shape: &[3],
            stride: &[0],
        };
        assert_eq!(
            hash_view(&one, &view),
            hash_bytes(&[7, 0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0])
        );
    }
}

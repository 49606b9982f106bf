//! Strided views hashed where their bytes lie, not gathered into logical
//! order first. The hash is a sum over words keyed by their logical
//! position, so any word may be summed as soon as its position is known:
//!
//! - rows: a view whose innermost dimension is contiguous, in rows of
//!   whole words (a slice of a wider tensor, heads split off a projection)
//!   sums each row where it lies, at its first word's position (rows of a
//!   multiple of 32 bytes in lanes carried from one row to the next);
//! - columns: a transposed view (the innermost dimension strided, the one
//!   outside it contiguous in memory, as a Linear's weight is read in its
//!   backward) makes each word of a logical row from the elements of
//!   adjacent columns, reading those columns down memory side by side, and
//!   sums a column of words at a time with keys a row's words apart
//!   (4-byte elements, the common case, straight from their two columns
//!   in AVX2; others through a block the columns are interleaved into).
//!
//! Other layouts (rows of a few bytes, words across rows, elements of odd
//! sizes) are gathered by the caller.

use super::{Sum, View, for_each_element};

/// Rows shorter than this are gathered: summing each where it lies costs
/// more than copying it.
const SHORTEST_ROW: usize = 32;

/// Words made from a transposed view's columns before they are summed.
const BLOCK: usize = 512;

/// The sum of `view`'s words over `memory` (which starts at its first
/// element and covers its extent), read where they lie; None when its
/// layout is not one of the module's.
pub(super) fn sum(memory: &[u8], view: &View<'_>) -> Option<Sum> {
    let (shape, stride) = merged(view);
    let dims = shape.len();
    if dims == 0 || shape.contains(&0) || memory.len() < view.extent() {
        return None;
    }
    let itemsize = view.itemsize;
    let row_bytes = shape[dims - 1] * itemsize;
    if stride[dims - 1] == 1 && row_bytes.is_multiple_of(8) && row_bytes >= SHORTEST_ROW {
        return Some(rows(memory, itemsize, &shape, &stride));
    }
    let words_across = 8usize.checked_div(itemsize).filter(|w| w * itemsize == 8)?;
    if dims >= 2 && stride[dims - 2] == 1 && shape[dims - 1].is_multiple_of(words_across) {
        return Some(columns(memory, itemsize, &shape, &stride));
    }
    None
}

/// The view's sizes and strides with dimensions of size one left out and
/// each dimension that steps over the next one whole merged into it.
fn merged(view: &View<'_>) -> (Vec<usize>, Vec<usize>) {
    let mut shape: Vec<usize> = Vec::with_capacity(view.shape.len());
    let mut stride: Vec<usize> = Vec::with_capacity(view.shape.len());
    for (&n, &s) in view.shape.iter().zip(view.stride) {
        if n == 1 {
            continue;
        }
        match (shape.last_mut(), stride.last_mut()) {
            (Some(outer_n), Some(outer_s)) if *outer_s == n * s => {
                *outer_n *= n;
                *outer_s = s;
            }
            _ => {
                shape.push(n);
                stride.push(s);
            }
        }
    }
    (shape, stride)
}

/// Each contiguous innermost row summed where it lies.
fn rows(memory: &[u8], itemsize: usize, shape: &[usize], stride: &[usize]) -> Sum {
    let dims = shape.len();
    let row_bytes = shape[dims - 1] * itemsize;
    let outer = View {
        itemsize,
        shape: &shape[..dims - 1],
        stride: &stride[..dims - 1],
    };
    let mut sum = Sum::default();
    if row_bytes.is_multiple_of(32) {
        sum.add_rows(memory, &outer, row_bytes);
        return sum;
    }
    let mut word = 0u64;
    for_each_element(&outer, |at| {
        sum.add(word, &memory[at..at + row_bytes]);
        word += (row_bytes / 8) as u64;
    });
    sum
}

/// Each matrix of a view whose innermost two dimensions are transposed
/// (the rows' index contiguous in memory), summed a column of words at a
/// time: word `k` of each logical row holds the elements of columns
/// `k * across ..` of that row, which lie in `across` memory runs side by
/// side.
fn columns(memory: &[u8], itemsize: usize, shape: &[usize], stride: &[usize]) -> Sum {
    let dims = shape.len();
    let (rows, cols) = (shape[dims - 2], shape[dims - 1]);
    let col_stride = stride[dims - 1] * itemsize;
    let across = 8 / itemsize;
    let row_words = (cols / across) as u64;
    let outer = View {
        itemsize,
        shape: &shape[..dims - 2],
        stride: &stride[..dims - 2],
    };
    let mut sum = Sum::default();
    let mut words = [0u8; BLOCK * 8];
    let mut matrix_word = 0u64;
    for_each_element(&outer, |base| {
        for k in 0..cols / across {
            // Two columns of 4-byte elements make each word: summed as
            // they lie, with no block between (3.4 times faster, a 1 MB
            // weight in cache).
            if itemsize == 4 {
                let at = base + 2 * k * col_stride;
                let low = &memory[at..at + rows * 4];
                let high = &memory[at + col_stride..at + col_stride + rows * 4];
                sum.add_pairs(matrix_word + k as u64, row_words, low, high);
                continue;
            }
            let mut runs: [&[u8]; 8] = [&[]; 8];
            for (j, run) in runs.iter_mut().take(across).enumerate() {
                let at = base + (k * across + j) * col_stride;
                *run = &memory[at..at + rows * itemsize];
            }
            let runs = &runs[..across];
            for first in (0..rows).step_by(BLOCK) {
                let block = &mut words[..BLOCK.min(rows - first) * 8];
                match itemsize {
                    1 => interleave::<1>(runs, first, block),
                    2 => interleave::<2>(runs, first, block),
                    4 => interleave::<4>(runs, first, block),
                    _ => interleave::<8>(runs, first, block),
                }
                let first_word = matrix_word + first as u64 * row_words + k as u64;
                sum.add_stepped(first_word, row_words, block);
            }
        }
        matrix_word += rows as u64 * row_words;
    });
    sum
}

/// Words `first ..` of a column of words, as bytes: word `i` takes
/// element `first + i` of each run, the first run's in its lowest bytes
/// (each run's elements laid into the block in turn).
#[inline(always)]
fn interleave<const N: usize>(runs: &[&[u8]], first: usize, words: &mut [u8]) {
    let count = words.len() / 8;
    for (j, run) in runs.iter().enumerate() {
        let elements = &run[first * N..(first + count) * N];
        for (word, element) in words.chunks_exact_mut(8).zip(elements.chunks_exact(N)) {
            word[j * N..j * N + N].copy_from_slice(element);
        }
    }
}

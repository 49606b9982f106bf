//! Samples (1.18): a fixed handful of a tensor's elements, at positions
//! that depend on its element count alone. Two runs that compute the same
//! tensor differently (eager and compiled, two configs, fp32 and bf16)
//! sample the same elements, so the error between them can be estimated
//! without either run copying its values to the host.
//!
//! The elements are numbered in logical (row-major) order. They are cut
//! into `k = min(SAMPLES, numel)` consecutive chunks, the first
//! `numel % k` of them one element longer, and one element is taken from
//! each chunk at an offset scrambled by the chunk's number, so that the
//! samples do not all fall on one column of a matrix whose row length
//! divides the chunk length. The recorder's CUDA kernel (`ttsample` in
//! `assets/cuda/tthash.cu`) follows the same rule.

use crate::hash::fmix64;

/// The most elements sampled from one tensor.
pub const SAMPLES: u64 = 32;

/// The logical index of sample `k` of a tensor of `numel` elements.
pub fn position(k: u64, numel: u64) -> u64 {
    let chunks = SAMPLES.min(numel).max(1);
    let (len, longer) = (numel / chunks, numel % chunks);
    let start = k * len + k.min(longer);
    let chunk_len = len + u64::from(k < longer);
    start + fmix64(k + 1) % chunk_len.max(1)
}

/// The logical indices sampled from a tensor of `numel` elements, in
/// increasing order.
pub fn positions(numel: u64) -> impl Iterator<Item = u64> {
    (0..SAMPLES.min(numel)).map(move |k| position(k, numel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_sample_falls_in_its_own_chunk_and_in_order() {
        for numel in [1, 2, 31, 32, 33, 64, 100, 1000, 4096, 1 << 40] {
            let all: Vec<u64> = positions(numel).collect();
            assert_eq!(all.len() as u64, SAMPLES.min(numel));
            assert!(all.windows(2).all(|w| w[0] < w[1]), "{numel}: {all:?}");
            assert!(all.iter().all(|&p| p < numel));
        }
    }

    #[test]
    fn a_small_tensor_is_sampled_whole() {
        assert_eq!(positions(5).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
        assert_eq!(positions(0).count(), 0);
    }

    #[test]
    fn samples_of_a_matrix_fall_on_more_than_one_column() {
        // 64 rows of 128: each chunk is two rows long.
        let columns: std::collections::BTreeSet<u64> =
            positions(64 * 128).map(|p| p % 128).collect();
        assert!(columns.len() > 8, "{columns:?}");
    }
}

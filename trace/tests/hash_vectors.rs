//! The hash matches the pinned vectors that the GPU kernel and other
//! implementations are checked against, and the spec in docs/hashing.md.

use tritontui_trace::hash::hash_bytes;

fn input(len: usize) -> Vec<u8> {
    (0..len).map(|i| ((i * 31 + 7) % 251) as u8).collect()
}

/// docs/hashing.md, transcribed without the optimisations of the crate.
fn spec(bytes: &[u8]) -> u64 {
    let mut sum = 0u64;
    for (i, chunk) in bytes.chunks(8).enumerate() {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        let k = 0x243f_6a88_85a3_08d3u64
            .wrapping_add((i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let x = u64::from_le_bytes(word) ^ k;
        sum = sum.wrapping_add(
            (x & 0xffff_ffff)
                .wrapping_mul(x >> 32)
                .wrapping_add(x.rotate_left(32)),
        );
    }
    let mut h = sum ^ (bytes.len() as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

#[test]
fn the_pinned_vectors_hold() {
    let text = include_str!("hash_vectors.txt");
    let mut checked = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (len, hex) = line.split_once(' ').expect("<len> <hash>");
        let len: usize = len.parse().expect("length");
        let expected = u64::from_str_radix(hex, 16).expect("hex");
        let data = input(len);
        assert_eq!(hash_bytes(&data), expected, "length {len}");
        assert_eq!(spec(&data), expected, "the spec disagrees at length {len}");
        checked += 1;
    }
    assert_eq!(checked, 11);
}

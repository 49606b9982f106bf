//! How one table launch's blocks are shared among its hashes.
//!
//! A table launch is one wave: the device runs every block at once, each
//! streaming its share of one hash's bytes to the end (`share_of` in the
//! PTX source). The launch takes as long as its slowest block, so the
//! blocks share the bytes evenly, and their number must not exceed what
//! the device holds at once: a block past that waits for one of the wave
//! to end and then reads a whole share alone, at a small fraction of the
//! device's rate (H200: five weights of 30 MB in one table, 528 blocks
//! and a few more, took 14.3 us where the same bytes in one tensor took
//! 11.0).

use super::TABLE_ITEMS;
use smallvec::SmallVec;

/// Per-hash values of one table launch, kept inline: shares are worked
/// out at every table launch, on the program's thread.
type PerHash<T> = SmallVec<[T; TABLE_ITEMS]>;

/// What one hash of a table asks for.
#[derive(Debug, Clone, Copy)]
pub struct Want {
    /// The bytes its blocks share.
    pub bytes: u64,
    /// The most blocks it can use (at least one).
    pub most: u32,
    /// Whether it takes exactly `most`, whatever the others read (a
    /// strided hash, whose blocks stride through the whole view).
    pub fixed: bool,
}

/// The blocks each hash gets in a launch on a device that runs `resident`
/// blocks at once: fixed hashes their own; the others a share of the
/// `resident` by bytes, at least one each and at most what they can use,
/// summing to no more than `resident` where every hash can have one (the
/// largest remainder method: each gets its share rounded down, then the
/// blocks left go to the largest remainders).
pub fn share_blocks(wants: &[Want], resident: u32) -> PerHash<u32> {
    let most = |i: usize| wants[i].most.max(1);
    let mut blocks: PerHash<u32> = (0..wants.len())
        .map(|i| if wants[i].fixed { most(i) } else { 1 })
        .collect();
    // A strided hash strides through its view in waves of its own: the
    // others share a whole wave as if it were not there.
    let mut budget = u64::from(resident);
    let mut open: PerHash<usize> = (0..wants.len()).filter(|&i| !wants[i].fixed).collect();
    let share = |budget: u64, bytes: u64, i: usize| {
        let exact = u128::from(budget) * u128::from(wants[i].bytes);
        let bytes = u128::from(bytes);
        ((exact / bytes) as u64, exact % bytes)
    };
    // Hashes that cannot use their share take what they can use, and the
    // others share the blocks left.
    let bytes = loop {
        let bytes: u64 = open.iter().map(|&i| wants[i].bytes).sum();
        if bytes == 0 || budget <= open.len() as u64 {
            // One block each: nothing to share (no bytes, or no more
            // blocks than hashes).
            return blocks;
        }
        let (capped, rest): (PerHash<usize>, PerHash<usize>) = open
            .iter()
            .copied()
            .partition(|&i| share(budget, bytes, i).0 >= u64::from(most(i)));
        if capped.is_empty() {
            break bytes;
        }
        for i in capped {
            blocks[i] = most(i);
            budget = budget.saturating_sub(u64::from(most(i)));
        }
        open = rest;
    };
    // Each hash's share rounded down, at least one block.
    let mut remainders: PerHash<(u128, usize)> = SmallVec::new();
    for &i in &open {
        let (quotient, remainder) = share(budget, bytes, i);
        blocks[i] = quotient.max(1) as u32;
        // A hash raised to one block has had more than its share.
        if quotient > 0 {
            remainders.push((remainder, i));
        }
    }
    let given: u64 = open.iter().map(|&i| u64::from(blocks[i])).sum();
    // Hashes raised to one block took more than their share (a block each
    // at most): the largest give blocks back until the rest fits.
    for _ in budget..given {
        let largest = open.iter().copied().max_by_key(|&i| blocks[i]);
        match largest {
            Some(i) if blocks[i] > 1 => blocks[i] -= 1,
            _ => break,
        }
    }
    // The blocks left go to the largest remainders.
    remainders.sort_unstable_by_key(|&(remainder, i)| (std::cmp::Reverse(remainder), i));
    for &(_, i) in remainders
        .iter()
        .take(budget.saturating_sub(given) as usize)
    {
        blocks[i] += 1;
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn want(bytes: u64, most: u32) -> Want {
        Want {
            bytes,
            most,
            fixed: false,
        }
    }

    #[test]
    fn the_blocks_fill_one_wave_exactly() {
        // Five weights of a transformer block (bf16, MB): shares rounded
        // up gave 533 blocks on a device running 528.
        let mb = 1 << 20;
        let wants: Vec<Want> = [6, 2, 8, 8, 6]
            .iter()
            .map(|&m| want(m * mb, u32::MAX))
            .collect();
        let blocks = share_blocks(&wants, 528);
        assert_eq!(blocks.iter().sum::<u32>(), 528, "{blocks:?}");
        // By bytes: 6/30 of 528 is 105.6.
        assert_eq!(blocks.as_slice(), [106, 35, 141, 141, 105]);
    }

    #[test]
    fn small_hashes_get_one_block_and_the_rest_share_what_is_left() {
        let mut wants = vec![want(2048, 1); 11];
        wants.push(want(8 << 20, u32::MAX));
        wants.push(want(8 << 20, u32::MAX));
        let blocks = share_blocks(&wants, 528);
        assert!(blocks[..11].iter().all(|&b| b == 1), "{blocks:?}");
        assert_eq!(blocks.iter().sum::<u32>(), 528, "{blocks:?}");
        assert!(blocks[11].abs_diff(blocks[12]) <= 1, "{blocks:?}");
    }

    #[test]
    fn a_hash_never_gets_more_blocks_than_it_can_use() {
        let wants = vec![want(1 << 30, 3), want(1 << 20, u32::MAX)];
        let blocks = share_blocks(&wants, 528);
        assert_eq!(blocks[0], 3);
        assert_eq!(
            blocks[1], 525,
            "the blocks the first cannot use go to the second"
        );
    }

    #[test]
    fn fixed_hashes_keep_their_blocks_and_the_others_share_a_wave() {
        let wants = vec![
            Want {
                bytes: 1 << 20,
                most: 100,
                fixed: true,
            },
            want(1 << 20, u32::MAX),
            want(3 << 20, u32::MAX),
        ];
        let blocks = share_blocks(&wants, 528);
        assert_eq!(blocks.as_slice(), [100, 132, 396]);
    }

    #[test]
    fn more_hashes_than_the_device_runs_at_once_get_one_block_each() {
        let wants = vec![want(1 << 20, u32::MAX); 20];
        assert_eq!(share_blocks(&wants, 16).as_slice(), [1; 20]);
        // Hashes of no bytes still write their result: one block each.
        let empty = vec![want(0, 1); 3];
        assert_eq!(share_blocks(&empty, 528).as_slice(), [1; 3]);
    }

    #[test]
    fn a_hash_raised_to_one_block_gets_no_more() {
        // Shares of 0.9, 0.9 and 526.2 blocks: the two small hashes are
        // raised to one and can use no more; the large one gets the rest.
        let wants = vec![want(9, 1), want(9, 4), want(5262, u32::MAX)];
        assert_eq!(share_blocks(&wants, 528).as_slice(), [1, 1, 526]);
    }

    #[test]
    fn hashes_raised_to_one_block_are_paid_for_by_the_largest() {
        // 30 one-byte hashes and one large: their exact shares round down
        // to nothing, so the large one gives up the 30 blocks they take.
        let mut wants = vec![want(1, 1); 30];
        wants.push(want(1 << 30, u32::MAX));
        let blocks = share_blocks(&wants, 528);
        assert_eq!(blocks.iter().sum::<u32>(), 528);
        assert_eq!(blocks[30], 498);
    }
}

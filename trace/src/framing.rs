//! Finds where one MessagePack value ends without decoding it, to tell a
//! record cut short by a crash from a record that is malformed.

/// Why a value could not be delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// The bytes end before the value does.
    Truncated,
    /// The byte at this offset (relative to the value's start) is not a
    /// valid MessagePack marker.
    Invalid(usize),
}

/// Returns the length in bytes of the MessagePack value at the start of
/// `data`. Iterative, so deeply nested input cannot overflow the stack.
pub fn value_len(data: &[u8]) -> Result<usize, FrameError> {
    let mut pos = 0usize;
    // Number of values still to read, including nested ones.
    let mut pending: u64 = 1;
    while pending > 0 {
        pending -= 1;
        let marker = *data.get(pos).ok_or(FrameError::Truncated)?;
        let at = pos;
        pos += 1;
        // (bytes of payload to skip, nested values to add)
        let (skip, nested): (u64, u64) = match marker {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => (0, 0),
            0x80..=0x8f => (0, 2 * u64::from(marker & 0x0f)),
            0x90..=0x9f => (0, u64::from(marker & 0x0f)),
            0xa0..=0xbf => (u64::from(marker & 0x1f), 0),
            0xc1 => return Err(FrameError::Invalid(at)),
            0xc4 | 0xd9 => (read_be(data, &mut pos, 1)?, 0),
            0xc5 | 0xda => (read_be(data, &mut pos, 2)?, 0),
            0xc6 | 0xdb => (read_be(data, &mut pos, 4)?, 0),
            0xc7 => (read_be(data, &mut pos, 1)? + 1, 0),
            0xc8 => (read_be(data, &mut pos, 2)? + 1, 0),
            0xc9 => (read_be(data, &mut pos, 4)? + 1, 0),
            0xca => (4, 0),
            0xcb => (8, 0),
            0xcc | 0xd0 => (1, 0),
            0xcd | 0xd1 => (2, 0),
            0xce | 0xd2 => (4, 0),
            0xcf | 0xd3 => (8, 0),
            0xd4 => (2, 0),
            0xd5 => (3, 0),
            0xd6 => (5, 0),
            0xd7 => (9, 0),
            0xd8 => (17, 0),
            0xdc => (0, read_be(data, &mut pos, 2)?),
            0xdd => (0, read_be(data, &mut pos, 4)?),
            0xde => (0, 2 * read_be(data, &mut pos, 2)?),
            0xdf => (0, 2 * read_be(data, &mut pos, 4)?),
        };
        let skip = usize::try_from(skip).map_err(|_| FrameError::Truncated)?;
        pos = pos.checked_add(skip).ok_or(FrameError::Truncated)?;
        if pos > data.len() {
            return Err(FrameError::Truncated);
        }
        pending += nested;
    }
    Ok(pos)
}

fn read_be(data: &[u8], pos: &mut usize, n: usize) -> Result<u64, FrameError> {
    let bytes = data.get(*pos..*pos + n).ok_or(FrameError::Truncated)?;
    *pos += n;
    Ok(bytes.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimits_nested_values_and_reports_truncation() {
        let value = (1u8, "abc", vec![1u64 << 40, 2], Some(3.5f64));
        let bytes = rmp_serde::to_vec(&value).expect("encode");
        assert_eq!(value_len(&bytes), Ok(bytes.len()));
        let mut longer = bytes.clone();
        longer.extend_from_slice(&[0x01, 0x02]);
        assert_eq!(value_len(&longer), Ok(bytes.len()));
        for cut in 0..bytes.len() {
            assert_eq!(
                value_len(&bytes[..cut]),
                Err(FrameError::Truncated),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn rejects_the_reserved_marker() {
        assert_eq!(value_len(&[0x92, 0x01, 0xc1]), Err(FrameError::Invalid(2)));
    }
}

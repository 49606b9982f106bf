//! Summary statistics of a floating-point tensor, to show how far apart two
//! values are when their hashes differ. Computed in element order, so the
//! result is the same on every run.

use crate::format::Stats;
use crate::hash::{View, for_each_element};

/// Decodes one element of a floating dtype.
fn decoder(dtype: &str) -> Option<fn(&[u8]) -> f64> {
    Some(match dtype {
        "float32" => |b: &[u8]| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        "float64" => {
            |b: &[u8]| f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
        }
        "bfloat16" => |b: &[u8]| {
            f64::from(f32::from_bits(
                u32::from(u16::from_le_bytes([b[0], b[1]])) << 16,
            ))
        },
        "float16" => |b: &[u8]| f64::from(f16_to_f32(u16::from_le_bytes([b[0], b[1]]))),
        _ => return None,
    })
}

/// IEEE binary16 to binary32, exactly.
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let mant = u32::from(h & 0x3ff);
    let magnitude = match (exp, mant) {
        (0, 0) => 0.0,
        (0, m) => m as f32 * f32::from_bits(0x3380_0000), // m * 2^-24
        (31, 0) => f32::INFINITY,
        (31, _) => f32::NAN,
        (e, m) => f32::from_bits(((e + 112) << 23) | (m << 13)),
    };
    f32::from_bits(magnitude.to_bits() | sign)
}

/// Statistics of `view` over `memory`, or `None` for a non-floating dtype.
pub fn stats(memory: &[u8], view: &View<'_>, dtype: &str) -> Option<Stats> {
    let decode = decoder(dtype)?;
    let (mut min, mut max, mut sum_abs) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    let (mut finite, mut nan, mut inf) = (0u64, 0u64, 0u64);
    for_each_element(view, |offset| {
        let x = decode(&memory[offset..offset + view.itemsize]);
        if x.is_nan() {
            nan += 1;
        } else if x.is_infinite() {
            inf += 1;
        } else {
            finite += 1;
            min = min.min(x);
            max = max.max(x);
            sum_abs += x.abs();
        }
    });
    Some(if finite == 0 {
        Stats {
            min: 0.0,
            max: 0.0,
            mean_abs: 0.0,
            nan,
            inf,
        }
    } else {
        Stats {
            min,
            max,
            mean_abs: sum_abs / finite as f64,
            nan,
            inf,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_specials_apart_from_finite_values() {
        let values = [1.5f32, -3.0, f32::NAN, f32::INFINITY, 0.5];
        let memory: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = View {
            itemsize: 4,
            shape: &[5],
            stride: &[1],
        };
        let s = stats(&memory, &view, "float32").expect("float");
        assert_eq!((s.min, s.max, s.nan, s.inf), (-3.0, 1.5, 1, 1));
        assert!((s.mean_abs - 5.0 / 3.0).abs() < 1e-12);
        assert!(stats(&memory, &view, "int32").is_none());
    }

    #[test]
    fn half_precision_decodes_exactly() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0xfc00), f32::NEG_INFINITY);
    }
}

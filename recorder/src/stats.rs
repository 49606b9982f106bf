//! Summary statistics of a floating-point tensor, to show how far apart two
//! values are when their hashes differ. Computed in element order, so the
//! result is the same on every run.

use tritontui_trace::format::Stats;
use tritontui_trace::hash::{View, for_each_element};

/// What is taken of a float tensor's values beside its hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Summary {
    /// Its summary statistics (`stats`).
    Stats,
    /// Its samples (`samples`).
    Samples,
}

/// Decodes one element of a floating dtype.
pub(crate) fn decoder(dtype: &str) -> Option<fn(&[u8]) -> f64> {
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

/// The samples of `view` over `memory` (`tritontui_trace::samples`), or
/// `None` for a non-floating dtype.
pub fn samples(memory: &[u8], view: &View<'_>, dtype: &str) -> Option<Vec<f64>> {
    let decode = decoder(dtype)?;
    let numel = view.numel() as u64;
    let values = tritontui_trace::samples::positions(numel)
        .map(|position| {
            // The logical index unravelled over the shape, innermost first.
            let mut rest = position as usize;
            let mut offset = 0usize;
            for (&size, &stride) in view.shape.iter().zip(view.stride).rev() {
                offset += (rest % size) * stride;
                rest /= size;
            }
            let at = offset * view.itemsize;
            decode(&memory[at..at + view.itemsize])
        })
        .collect();
    Some(values)
}

/// Buckets of the device summary: 4 binary exponents each (see `ttstats`
/// in `assets/cuda/tthash.cu`).
const DEVICE_BUCKETS: usize = 64;

/// Decodes the 69 result slots of the device summary kernel: 64 bucket
/// sums of absolute values, then the finite, NaN and infinite counts, the
/// largest value's order key and the complement of the smallest's. The
/// buckets are scaled and added in a fixed order, so equal inputs always
/// give equal results.
pub fn from_device_slots(slots: &[u64]) -> Stats {
    let slot = |i: usize| slots.get(i).copied().unwrap_or(0);
    let (finite, nan, inf) = (slot(64), slot(65), slot(66));
    if finite == 0 {
        return Stats {
            min: 0.0,
            max: 0.0,
            mean_abs: 0.0,
            nan,
            inf,
        };
    }
    let sum_abs: f64 = (0..DEVICE_BUCKETS)
        .map(|b| slot(b) as f64 * 2f64.powi(4 * b as i32 - 149))
        .sum();
    let value = |key: u64| {
        let key = key as u32;
        let bits = if key & 0x8000_0000 != 0 {
            key & 0x7fff_ffff
        } else {
            !key
        };
        f64::from(f32::from_bits(bits))
    };
    Stats {
        min: value(!slot(68)),
        max: value(slot(67)),
        mean_abs: sum_abs / finite as f64,
        nan,
        inf,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn samples_follow_the_logical_order_of_a_transposed_view() {
        // A 3x40 matrix of 0..120 stored transposed (column-major).
        let (rows, cols) = (3usize, 40usize);
        let mut data = vec![0f32; rows * cols];
        for r in 0..rows {
            for c in 0..cols {
                data[c * rows + r] = (r * cols + c) as f32;
            }
        }
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        let view = View {
            itemsize: 4,
            shape: &[rows, cols],
            stride: &[1, rows],
        };
        let got = super::samples(&bytes, &view, "float32").expect("float");
        let want: Vec<f64> = tritontui_trace::samples::positions(120)
            .map(|p| p as f64)
            .collect();
        assert_eq!(got, want);
        assert_eq!(super::samples(&bytes, &view, "int32"), None);
    }

    use super::*;

    /// What `ttstats` adds into its slots for these float32 values, done
    /// one value at a time (the kernel does the same in any order).
    fn device_slots(values: &[f32]) -> Vec<u64> {
        let mut slots = vec![0u64; 69];
        for v in values {
            let bits = v.to_bits();
            let exp = (bits >> 23) & 0xff;
            if exp == 0xff {
                slots[if bits & 0x7f_ffff != 0 { 65 } else { 66 }] += 1;
                continue;
            }
            slots[64] += 1;
            let key = if bits & 0x8000_0000 != 0 {
                !bits
            } else {
                bits | 0x8000_0000
            };
            slots[67] = slots[67].max(u64::from(key));
            slots[68] = slots[68].max(u64::from(!key));
            let mant = (bits & 0x7f_ffff) | if exp != 0 { 0x80_0000 } else { 0 };
            let e1 = exp.max(1) - 1;
            slots[(e1 >> 2) as usize] += u64::from(mant) << (e1 & 3);
        }
        slots
    }

    #[test]
    fn device_summary_decodes_to_the_host_summary() {
        let values = [
            1.5f32,
            -3.0,
            f32::NAN,
            f32::INFINITY,
            0.5,
            1e-40, // subnormal
            -2.5e30,
            f32::MAX,
            -0.0,
        ];
        let memory: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = View {
            itemsize: 4,
            shape: &[values.len()],
            stride: &[1],
        };
        let host = stats(&memory, &view, "float32").expect("float");
        let device = from_device_slots(&device_slots(&values));
        assert_eq!(
            (device.min, device.max, device.nan, device.inf),
            (host.min, host.max, host.nan, host.inf)
        );
        let relative = (device.mean_abs - host.mean_abs).abs() / host.mean_abs;
        assert!(relative < 1e-12, "{} vs {}", device.mean_abs, host.mean_abs);
    }

    #[test]
    fn a_device_summary_of_no_finite_value_is_zero() {
        let s = from_device_slots(&device_slots(&[f32::NAN, f32::NEG_INFINITY]));
        assert_eq!(
            (s.min, s.max, s.mean_abs, s.nan, s.inf),
            (0.0, 0.0, 0.0, 1, 1)
        );
    }

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

//! How far apart two points are, from their samples: estimates of the
//! whole tensors' error (32 of their elements, at the same positions in
//! both runs), said as estimates wherever they are shown.

use serde::Serialize;

/// The error between a point of run A and its counterpart in run B.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PointError {
    /// `‖a − b‖₂ / max(‖a‖₂, ‖b‖₂)` over the samples (0 when both are
    /// zero; infinite when only one side is NaN or infinite somewhere).
    pub relative: f64,
    /// The root mean square of `a − b` over the samples: the absolute
    /// error, which a cancellation does not inflate as it does the
    /// relative one.
    pub rms: f64,
    /// The largest `|a − b|` of a sample.
    pub max_abs: f64,
    /// The largest distance between a sample's two values in units in
    /// the last place of B's dtype: how many of its values lie between
    /// them, as `tritontui values` counts (+0 and −0 are 0 apart; a value
    /// between two of the dtype's counts a fraction).
    pub ulps: f64,
}

impl PointError {
    /// The error between samples `a` and `b` (of equal length), B's
    /// values of dtype `dtype`.
    pub fn between(a: &[f64], b: &[f64], dtype: &str) -> PointError {
        let (mut diff2, mut a2, mut b2) = (0.0f64, 0.0f64, 0.0f64);
        let (mut max_abs, mut ulps) = (0.0f64, 0.0f64);
        let mut unmatched_special = false;
        for (&x, &y) in a.iter().zip(b) {
            if !x.is_finite() || !y.is_finite() {
                // NaN against NaN, +inf against +inf: the same value.
                let same = (x.is_nan() && y.is_nan()) || x == y;
                unmatched_special |= !same;
                continue;
            }
            let d = (x - y).abs();
            diff2 += d * d;
            a2 += x * x;
            b2 += y * y;
            max_abs = max_abs.max(d);
            ulps = ulps.max((ordinal(x, dtype) - ordinal(y, dtype)).abs());
        }
        if unmatched_special {
            return PointError {
                relative: f64::INFINITY,
                rms: f64::INFINITY,
                max_abs: f64::INFINITY,
                ulps: f64::INFINITY,
            };
        }
        let scale = a2.max(b2).sqrt();
        let relative = if diff2 == 0.0 {
            0.0
        } else if scale == 0.0 {
            f64::INFINITY
        } else {
            diff2.sqrt() / scale
        };
        let count = a.len().min(b.len()).max(1) as f64;
        PointError {
            relative,
            rms: (diff2 / count).sqrt(),
            max_abs,
            ulps,
        }
    }
}

/// The significand bits of a floating dtype (the implicit one included).
pub fn precision_bits(dtype: &str) -> u32 {
    match dtype {
        "float64" => 53,
        "float32" => 24,
        "float16" => 11,
        "bfloat16" => 8,
        // float8 and others: the coarsest the recorder samples.
        _ => 4,
    }
}

/// The unit roundoff of a dtype: half its machine epsilon, 2^-p.
pub fn unit_roundoff(dtype: &str) -> f64 {
    2f64.powi(-(precision_bits(dtype) as i32))
}

/// Where `x` falls in the order of dtype `dtype`'s values: 0 at zero,
/// one more for each value of the dtype above zero (below it for a
/// negative `x`), fractional between two of them.
fn ordinal(x: f64, dtype: &str) -> f64 {
    let p = precision_bits(dtype) as i32;
    let min_exponent = match dtype {
        "float64" => -1022,
        "float16" => -14,
        _ => -126,
    };
    let magnitude = x.abs();
    // Below the smallest normal the values are evenly spaced, by the
    // smallest normal's spacing; above it each binade holds 2^(p-1).
    let steps = if magnitude < 2f64.powi(min_exponent) {
        magnitude / 2f64.powi(min_exponent - (p - 1))
    } else {
        let exponent = magnitude.log2().floor() as i32;
        let binade = 2f64.powi(p - 1);
        f64::from(exponent - min_exponent + 1) * binade
            + (magnitude / 2f64.powi(exponent - (p - 1)) - binade)
    };
    steps.copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_samples_have_no_error() {
        let e = PointError::between(&[1.0, -2.0, f64::NAN], &[1.0, -2.0, f64::NAN], "float32");
        assert_eq!((e.relative, e.max_abs, e.ulps), (0.0, 0.0, 0.0));
    }

    #[test]
    fn one_ulp_of_float32_at_one_is_two_to_the_minus_23() {
        let b = 1.0 + 2f64.powi(-23);
        let e = PointError::between(&[1.0, 1.0], &[1.0, b], "float32");
        assert_eq!(e.ulps, 1.0);
        assert_eq!(e.max_abs, 2f64.powi(-23));
        assert!(e.relative > 0.0 && e.relative < 1e-6);
    }

    #[test]
    fn ulps_count_the_dtypes_values_between_as_tritontui_values_does() {
        let units = |a: f32, b: f32| PointError::between(&[a as f64], &[b as f64], "float32").ulps;
        let bits = |a: f32, b: f32| {
            let ordered = |v: f32| {
                let i = v.to_bits() as i32;
                if i < 0 {
                    i64::from(i32::MIN) - i64::from(i)
                } else {
                    i64::from(i)
                }
            };
            (ordered(a) - ordered(b)).unsigned_abs() as f64
        };
        // Near zero a small difference spans many values, but never more
        // than the dtype holds (it read 3.7e39 when counted in the
        // spacing at A's value of zero).
        for (a, b) in [
            (0.0, 5.3e-6),
            (-1e-30, 2e-30),
            (1.0, 1.5),
            (3.0e38, -1.0),
            (1e-40, 0.0),
        ] {
            assert_eq!(units(a, b), bits(a, b), "{a} {b}");
        }
        assert_eq!(units(-0.0, 0.0), 0.0);
        let bf16 = PointError::between(&[1.0], &[1.0078125], "bfloat16");
        assert_eq!(bf16.ulps, 1.0);
        let halfway = PointError::between(&[1.0], &[1.0 + 2f64.powi(-8)], "bfloat16");
        assert_eq!(halfway.ulps, 0.5);
    }

    #[test]
    fn a_nan_on_one_side_only_is_infinitely_far() {
        let e = PointError::between(&[1.0, 2.0], &[1.0, f64::NAN], "float32");
        assert!(e.relative.is_infinite());
    }
}

//! The accuracy minifier's rule against a reference run (`diff A B
//! --reference R`, R the program in float64, as the minifier reruns it):
//! run B's error against R may be `multiplier` times run A's plus a tenth
//! of `TOL` (`torch._dynamo.utils.same`: the multiplier is 3 for a
//! float16 or bfloat16 result or a tensor of fewer than 1,000 elements,
//! else 2). Errors are root mean squares over the samples.

use super::error::PointError;
use serde::Serialize;

/// `same()`'s default tolerance.
pub const TOL: f64 = 1e-4;

/// One point checked against the reference run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReferenceCheck {
    /// Run A's root mean square error against the reference.
    pub error_a: f64,
    /// Run B's.
    pub error_b: f64,
    /// What run B's may be: `multiplier * error_a + TOL / 10`.
    pub bound: f64,
}

impl ReferenceCheck {
    /// The check of samples `a` and `b` against the reference's `r`, run
    /// B's dtype `dtype_b`, of `numel` elements.
    pub fn of(r: &[f64], a: &[f64], b: &[f64], dtype_b: &str, numel: u64) -> ReferenceCheck {
        let error_a = PointError::between(r, a, "float64").rms;
        let error_b = PointError::between(r, b, "float64").rms;
        ReferenceCheck {
            error_a,
            error_b,
            bound: multiplier(dtype_b, numel) * error_a + TOL / 10.0,
        }
    }

    /// Whether run B's error is past what the rule allows (a NaN error
    /// is).
    pub fn fails(&self) -> bool {
        self.error_b.is_nan() || self.error_b > self.bound
    }
}

/// `same()`'s multiplier for a result of dtype `dtype` and `numel`
/// elements.
pub fn multiplier(dtype: &str, numel: u64) -> f64 {
    if matches!(dtype, "float16" | "bfloat16") || numel < 1000 {
        3.0
    } else {
        2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b_may_be_twice_as_far_from_the_reference_as_a_plus_a_tenth_of_tol() {
        let r = vec![1.0; 2000];
        let a: Vec<f64> = r.iter().map(|x| x + 1e-6).collect();
        let near: Vec<f64> = r.iter().map(|x| x + 1e-5).collect();
        let far: Vec<f64> = r.iter().map(|x| x + 1e-3).collect();
        assert!(!ReferenceCheck::of(&r, &a, &near, "float32", 2000).fails());
        assert!(ReferenceCheck::of(&r, &a, &far, "float32", 2000).fails());
        assert_eq!(multiplier("bfloat16", 1 << 20), 3.0);
        assert_eq!(multiplier("float32", 999), 3.0);
    }
}

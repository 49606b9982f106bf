//! KernelDiff metrics of two captured tensors of one dtype and shape (run
//! A against run B): how many elements differ in their bits, by how much
//! (absolute, relative, RMSE, units in the last place), NaN and Inf that
//! appear in one run only, and the element that differs most.

use super::safetensors::{Dtype, Tensor, element_size};
use float8::{F8E4M3, F8E5M2};
use half::{bf16, f16};
use serde::Serialize;

/// How two tensors differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    /// Elements compared.
    pub elements: u64,
    /// Elements whose bits differ.
    pub mismatched: u64,
    /// `mismatched` as a percentage of `elements`.
    pub mismatched_percent: f64,
    /// The largest |a - b| over elements finite in both runs.
    pub max_abs: f64,
    /// The mean |a - b| over elements finite in both runs.
    pub mean_abs: f64,
    /// The largest |a - b| / max(|a|, |b|) over elements finite in both
    /// runs and not both zero.
    pub max_rel: f64,
    /// The root mean square of a - b over elements finite in both runs.
    pub rmse: f64,
    /// The largest distance in units in the last place (for integers, the
    /// difference).
    pub max_ulp: u64,
    /// The mean distance in units in the last place.
    pub mean_ulp: f64,
    /// Elements NaN in one run and not the other.
    pub nan_differ: u64,
    /// Elements infinite in one run and not the other (or infinite of the
    /// other sign).
    pub inf_differ: u64,
    /// The element with the largest |a - b| (the first mismatch where no
    /// finite difference is larger than zero); null when none differs.
    pub worst: Option<Worst>,
    /// Where the mismatches are.
    pub heat_map: HeatMap,
}

/// A tensor folded to a small grid: its elements seen as rows (every
/// dimension but the last) by columns (the last), cut into at most
/// [`HEAT_ROWS`] x [`HEAT_COLS`] cells, each holding the fraction of its
/// elements whose bits differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeatMap {
    /// Rows of cells.
    pub rows: u32,
    /// Columns of cells.
    pub cols: u32,
    /// Each cell's fraction of mismatched elements, row by row.
    pub cells: Vec<f32>,
}

/// The most rows of cells a heat map has.
pub const HEAT_ROWS: u64 = 8;
/// The most columns of cells a heat map has.
pub const HEAT_COLS: u64 = 32;

/// Counts mismatches per cell of a tensor seen as a `height` x `width`
/// matrix.
struct Folding {
    width: u64,
    height: u64,
    rows: u64,
    cols: u64,
    mismatched: Vec<u64>,
}

impl Folding {
    fn new(shape: &[u64]) -> Folding {
        let width = shape.last().copied().unwrap_or(1).max(1);
        let height = shape[..shape.len().saturating_sub(1)]
            .iter()
            .product::<u64>()
            .max(1);
        let (rows, cols) = (height.min(HEAT_ROWS), width.min(HEAT_COLS));
        Folding {
            width,
            height,
            rows,
            cols,
            mismatched: vec![0; (rows * cols) as usize],
        }
    }

    /// The cell of element `i`.
    fn cell(&self, i: u64) -> usize {
        let (row, col) = (i / self.width, i % self.width);
        ((row * self.rows / self.height) * self.cols + col * self.cols / self.width) as usize
    }

    /// The map: each cell's count over the elements it holds.
    fn finish(self) -> HeatMap {
        // How many of `total` rows (or columns) part `k` of `parts` holds:
        // those j with j * parts / total == k.
        let span = |k: u64, parts: u64, total: u64| {
            (((k + 1) * total).div_ceil(parts)).min(total) - (k * total).div_ceil(parts)
        };
        let cells = self
            .mismatched
            .iter()
            .enumerate()
            .map(|(cell, &count)| {
                let (r, c) = (cell as u64 / self.cols, cell as u64 % self.cols);
                let size = span(r, self.rows, self.height) * span(c, self.cols, self.width);
                count as f32 / size.max(1) as f32
            })
            .collect();
        HeatMap {
            rows: self.rows as u32,
            cols: self.cols as u32,
            cells,
        }
    }
}

/// One element of both tensors.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Worst {
    /// Its index, one coordinate per dimension.
    pub index: Vec<u64>,
    /// Its value in run A.
    pub a: f64,
    /// Its value in run B.
    pub b: f64,
}

/// An element's value, and its place on the number line in units in the
/// last place; None for a dtype these metrics do not read.
fn decode(dtype: Dtype, bytes: &[u8]) -> Option<(f64, i128)> {
    let word = |n: usize| -> u64 {
        let mut buf = [0u8; 8];
        buf[..n].copy_from_slice(&bytes[..n]);
        u64::from_le_bytes(buf)
    };
    // Floats order as sign and magnitude: -0 and +0 meet at 0.
    let ordered = |bits: u64, width: u32| -> i128 {
        let sign = 1u64 << (width - 1);
        let magnitude = i128::from(bits & (sign - 1));
        if bits & sign != 0 {
            -magnitude
        } else {
            magnitude
        }
    };
    let integer = |v: i128| (v as f64, v);
    Some(match dtype {
        Dtype::F64 => (f64::from_bits(word(8)), ordered(word(8), 64)),
        Dtype::F32 => (
            f64::from(f32::from_bits(word(4) as u32)),
            ordered(word(4), 32),
        ),
        Dtype::BF16 => (
            bf16::from_bits(word(2) as u16).to_f64(),
            ordered(word(2), 16),
        ),
        Dtype::F16 => (
            f16::from_bits(word(2) as u16).to_f64(),
            ordered(word(2), 16),
        ),
        Dtype::F8_E4M3 => (
            F8E4M3::from_bits(word(1) as u8).to_f64(),
            ordered(word(1), 8),
        ),
        Dtype::F8_E5M2 => (
            F8E5M2::from_bits(word(1) as u8).to_f64(),
            ordered(word(1), 8),
        ),
        Dtype::I64 => integer(i128::from(word(8) as i64)),
        Dtype::I32 => integer(i128::from(word(4) as u32 as i32)),
        Dtype::I16 => integer(i128::from(word(2) as u16 as i16)),
        Dtype::I8 => integer(i128::from(word(1) as u8 as i8)),
        Dtype::U64 | Dtype::U32 | Dtype::U16 | Dtype::U8 | Dtype::BOOL => {
            integer(i128::from(word(element_size(dtype)?)))
        }
        _ => return None,
    })
}

/// The metrics of `a` against `b`; None when they differ in dtype or
/// shape, or their dtype is one these metrics do not read.
pub fn compare(a: &Tensor, b: &Tensor) -> Option<Metrics> {
    if a.dtype != b.dtype || a.shape != b.shape {
        return None;
    }
    let size = element_size(a.dtype)?;
    decode(a.dtype, &vec![0; size])?;
    let elements = a.bytes.len() / size;
    let mut m = Metrics {
        elements: elements as u64,
        mismatched: 0,
        mismatched_percent: 0.0,
        max_abs: 0.0,
        mean_abs: 0.0,
        max_rel: 0.0,
        rmse: 0.0,
        max_ulp: 0,
        mean_ulp: 0.0,
        nan_differ: 0,
        inf_differ: 0,
        worst: None,
        heat_map: HeatMap {
            rows: 0,
            cols: 0,
            cells: Vec::new(),
        },
    };
    let mut folding = Folding::new(&a.shape);
    let (mut finite, mut sum_abs, mut sum_sq, mut sum_ulp) = (0u64, 0.0, 0.0, 0.0);
    let mut worst: Option<(usize, f64)> = None;
    let mut first_mismatch = None;
    for i in 0..elements {
        let (ea, eb) = (&a.bytes[i * size..][..size], &b.bytes[i * size..][..size]);
        if ea == eb {
            continue;
        }
        m.mismatched += 1;
        let cell = folding.cell(i as u64);
        folding.mismatched[cell] += 1;
        first_mismatch.get_or_insert(i);
        let (Some((x, ox)), Some((y, oy))) = (decode(a.dtype, ea), decode(a.dtype, eb)) else {
            continue;
        };
        let ulp = (ox - oy).unsigned_abs();
        m.max_ulp = m.max_ulp.max(u64::try_from(ulp).unwrap_or(u64::MAX));
        sum_ulp += ulp as f64;
        if x.is_nan() != y.is_nan() {
            m.nan_differ += 1;
        }
        if (x.is_infinite() || y.is_infinite()) && x != y && !x.is_nan() && !y.is_nan() {
            m.inf_differ += 1;
        }
        if !(x.is_finite() && y.is_finite()) {
            continue;
        }
        finite += 1;
        let diff = (x - y).abs();
        sum_abs += diff;
        sum_sq += diff * diff;
        let scale = x.abs().max(y.abs());
        if scale > 0.0 {
            m.max_rel = m.max_rel.max(diff / scale);
        }
        if worst.is_none_or(|(_, d)| diff > d) {
            worst = Some((i, diff));
        }
        m.max_abs = m.max_abs.max(diff);
    }
    // Elements with equal bits differ by nothing: they count in the means.
    if elements > 0 {
        let compared = (elements as u64 - m.mismatched + finite) as f64;
        m.mean_abs = sum_abs / compared;
        m.rmse = (sum_sq / compared).sqrt();
        m.mean_ulp = sum_ulp / elements as f64;
        m.mismatched_percent = 100.0 * m.mismatched as f64 / elements as f64;
    }
    m.heat_map = folding.finish();
    let worst_index = worst
        .filter(|&(_, d)| d > 0.0)
        .map(|(i, _)| i)
        .or(first_mismatch);
    m.worst = worst_index.map(|i| {
        let value =
            |t: &Tensor| decode(t.dtype, &t.bytes[i * size..][..size]).map_or(f64::NAN, |v| v.0);
        Worst {
            index: unravel(i as u64, &a.shape),
            a: value(a),
            b: value(b),
        }
    });
    Some(m)
}

/// The coordinates of row-major element `i` of `shape`.
fn unravel(mut i: u64, shape: &[u64]) -> Vec<u64> {
    let mut index = vec![0; shape.len()];
    for (slot, &dim) in index.iter_mut().zip(shape).rev() {
        if dim > 0 {
            *slot = i % dim;
            i /= dim;
        }
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(shape: &[u64], values: &[f32]) -> Tensor {
        Tensor {
            dtype: Dtype::F32,
            shape: shape.to_vec(),
            bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        }
    }

    #[test]
    fn equal_tensors_differ_nowhere() {
        let a = f32s(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let m = compare(&a, &a).unwrap();
        assert_eq!((m.mismatched, m.max_ulp, m.max_abs), (0, 0, 0.0));
        assert_eq!(m.worst, None);
        assert_eq!((m.heat_map.rows, m.heat_map.cols), (2, 2));
        assert!(m.heat_map.cells.iter().all(|&c| c == 0.0));
    }

    #[test]
    fn the_heat_map_folds_rows_and_columns_into_cells() {
        // 16 rows of 64: cells of 2 rows by 2 columns. Element [5, 7]
        // lands in cell (2, 3), a quarter of its four elements.
        let zeros = vec![0.0f32; 16 * 64];
        let mut bumped = zeros.clone();
        bumped[5 * 64 + 7] = 1.0;
        let m = compare(&f32s(&[16, 64], &zeros), &f32s(&[16, 64], &bumped)).unwrap();
        let map = &m.heat_map;
        assert_eq!((map.rows, map.cols), (8, 32));
        assert_eq!(map.cells[2 * 32 + 3], 0.25);
        assert_eq!(map.cells.iter().filter(|&&c| c > 0.0).count(), 1);
        // A vector is one row; uneven cells count their own elements.
        let m = compare(&f32s(&[33], &[0.0; 33]), &f32s(&[33], &[1.0; 33])).unwrap();
        assert_eq!((m.heat_map.rows, m.heat_map.cols), (1, 32));
        assert!(
            m.heat_map.cells.iter().all(|&c| c == 1.0),
            "{:?}",
            m.heat_map
        );
    }

    #[test]
    fn the_worst_element_is_found_and_each_measure_is_right() {
        let a = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let next = f32::from_bits(4.0f32.to_bits() + 2);
        let b = f32s(&[2, 3], &[1.0, 2.0, 3.0, next, 5.5, 6.0]);
        let m = compare(&a, &b).unwrap();
        assert_eq!(m.elements, 6);
        assert_eq!(m.mismatched, 2);
        assert!((m.mismatched_percent - 100.0 / 3.0).abs() < 1e-9);
        assert_eq!(m.max_abs, 0.5);
        let small = f64::from(next) - 4.0;
        assert!((m.mean_abs - (0.5 + small) / 6.0).abs() < 1e-12);
        assert!((m.rmse - ((0.25 + small * small) / 6.0).sqrt()).abs() < 1e-12);
        assert!((m.max_rel - 0.5 / 5.5).abs() < 1e-12);
        assert_eq!(m.max_ulp, u64::from(5.5f32.to_bits() - 5.0f32.to_bits()));
        let worst = m.worst.unwrap();
        assert_eq!((worst.index, worst.a, worst.b), (vec![1, 1], 5.0, 5.5));
    }

    #[test]
    fn nan_and_inf_in_one_run_are_counted_and_signed_zeros_are_no_ulp_apart() {
        let a = f32s(&[4], &[f32::NAN, 1.0, 0.0, 2.0]);
        let b = f32s(&[4], &[1.0, f32::INFINITY, -0.0, 2.0]);
        let m = compare(&a, &b).unwrap();
        assert_eq!((m.mismatched, m.nan_differ, m.inf_differ), (3, 1, 1));
        assert_eq!(m.max_abs, 0.0);
        // -0 and +0 differ in their bits, by no value: the worst is the
        // first mismatch.
        assert_eq!(m.worst.unwrap().index, [0]);
    }

    #[test]
    fn half_bfloat16_and_float8_decode() {
        let value = |dtype, bytes: &[u8]| decode(dtype, bytes).unwrap().0;
        assert_eq!(value(Dtype::F16, &[0x00, 0x3c]), 1.0);
        assert_eq!(value(Dtype::F16, &[0x00, 0xc0]), -2.0);
        assert_eq!(value(Dtype::F16, &[0x01, 0x00]), 2f64.powi(-24));
        assert!(value(Dtype::F16, &[0x00, 0x7c]).is_infinite());
        assert_eq!(value(Dtype::BF16, &[0x80, 0x3f]), 1.0);
        assert_eq!(value(Dtype::F8_E4M3, &[0x38]), 1.0);
        // E4M3FN: no infinities, NaN only at all ones; 448 the largest.
        assert!(value(Dtype::F8_E4M3, &[0x7f]).is_nan());
        assert_eq!(value(Dtype::F8_E4M3, &[0x7e]), 448.0);
        assert_eq!(value(Dtype::F8_E4M3, &[0x01]), 2f64.powi(-9));
        assert_eq!(value(Dtype::F8_E5M2, &[0x3c]), 1.0);
        assert!(value(Dtype::F8_E5M2, &[0x7c]).is_infinite());
        assert!(value(Dtype::F8_E5M2, &[0x7d]).is_nan());
        assert_eq!(value(Dtype::I16, &[0xff, 0xff]), -1.0);
        assert!(decode(Dtype::F4, &[0]).is_none());
        let bf16 = |v: f32| Tensor {
            dtype: Dtype::BF16,
            shape: vec![1],
            bytes: ((v.to_bits() >> 16) as u16).to_le_bytes().to_vec(),
        };
        assert_eq!(compare(&bf16(1.0), &bf16(1.0078125)).unwrap().max_ulp, 1);
        assert!(compare(&bf16(1.0), &f32s(&[1], &[1.0])).is_none());
    }
}

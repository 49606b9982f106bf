//! Row hashes (`rows`): each index of a tensor's leading dimension hashed
//! on its own after the launch, as if it were a tensor by itself, so that
//! the same row at another offset (a request alone, or inside a batch)
//! hashes the same. On the device one kernel hashes a tensor's rows, a
//! block a row; on the host each is hashed over the row's bytes.

use super::{Described, TensorView, Value, on_host};
use crate::background::{Field, Fill};
use pyo3::prelude::*;
use tritontui_trace::hash::{View, hash_view};

/// The most rows a tensor's row hashes cover: a tensor with more has none
/// (its rows would take more of a launch's result slots than one launch
/// holds).
pub const MAX_ROWS: u64 = 1024;

impl Described {
    /// The row hashes of `view` (the launch's tensor number `tensor`), now
    /// or as fills for the writer thread; None for a tensor without rows
    /// (no dimension), with more than [`MAX_ROWS`], not hashable, captured
    /// into a CUDA graph, or whose rows did not all fit the launch's batch.
    pub(super) fn rows(
        &mut self,
        py: Python<'_>,
        view: &TensorView,
        tensor: usize,
    ) -> PyResult<Option<Vec<u64>>> {
        let Some((&count, _)) = view.shape.split_first() else {
            return Ok(None);
        };
        if !view.hashable || count == 0 || count > MAX_ROWS {
            return Ok(None);
        }
        if view.device >= 0 {
            if self.capturing(py)? {
                return Ok(None);
            }
            #[cfg(feature = "cuda")]
            if let Some(rows) = self.rows_on_device(py, view, tensor, count)? {
                return Ok(rows);
            }
        }
        #[cfg(not(feature = "cuda"))]
        let _ = tensor;
        on_host(py, view, |memory, host| Some(rows_on_host(memory, host)))
    }

    /// Enqueues the row hashes on the device (one kernel, a block a row):
    /// Some(None) when they did not fit the batch, None when the device
    /// cannot hash this tensor.
    #[cfg(feature = "cuda")]
    fn rows_on_device(
        &mut self,
        py: Python<'_>,
        view: &TensorView,
        tensor: usize,
        count: u64,
    ) -> PyResult<Option<Option<Vec<u64>>>> {
        let enqueued = self.on_device::<u64>(py, view, |batch, v| unsafe {
            // SAFETY: `v` is a live CUDA tensor kept alive by the recorder
            // until its record is written.
            batch.rows(v.ptr, v.itemsize, &v.shape, &v.stride)
        })?;
        Ok(match enqueued {
            Some(Value::Ticket(first)) => {
                self.fills.push(Fill {
                    arg: tensor,
                    field: Field::Rows,
                    index: first,
                });
                Some(Some(vec![0; count as usize]))
            }
            Some(Value::Missing | Value::Now(_)) => Some(None),
            None => None,
        })
    }
}

/// Each row's hash of a host view's bytes (`memory` from its first
/// element).
fn rows_on_host(memory: &[u8], view: &View<'_>) -> Vec<u64> {
    let (Some((&count, shape)), Some((&stride, strides))) =
        (view.shape.split_first(), view.stride.split_first())
    else {
        return Vec::new();
    };
    let row = View {
        itemsize: view.itemsize,
        shape,
        stride: strides,
    };
    (0..count)
        .map(|r| {
            hash_view(
                memory.get(r * stride * view.itemsize..).unwrap_or(&[]),
                &row,
            )
        })
        .collect()
}

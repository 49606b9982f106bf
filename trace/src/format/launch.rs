//! A launch record and what it refers to: its kernel (with its source and
//! its arguments' names and access) and its tensors' layouts.

use super::{ArgValue, Scalar};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Source text of one or more kernels, stored whole so the trace is
/// self-contained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceDef {
    /// Identifier referenced by [`KernelDef::source`].
    pub id: u64,
    /// Path the source was read from when recorded.
    #[serde(default)]
    pub path: String,
    /// Language for highlighting: `python`, `cpp`, `cuda`, or empty.
    #[serde(default)]
    pub lang: String,
    /// The full text.
    pub text: String,
}

/// An interned kernel: everything about it that does not change per launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelDef {
    /// Identifier referenced by [`LaunchRecord::kernel`].
    pub id: u64,
    /// Kernel name, e.g. `triton_poi_fused_add_0` or `aten::mm`.
    pub name: String,
    /// `triton`, `cpp`, `aten`, `user-triton` or `extern` (a C shim
    /// called by a C++ wrapper).
    pub backend: String,
    /// Declared parameters, in launch-argument order.
    #[serde(default)]
    pub args: Vec<ArgDef>,
    /// Source id, if the source is in the trace.
    #[serde(default)]
    pub source: Option<u64>,
    /// Compiler metadata worth keeping (`atomic_add_found`, deterministic
    /// flags, ...).
    #[serde(default)]
    pub meta: BTreeMap<String, Scalar>,
    /// Launch configuration: `num_warps`, `num_stages`, block sizes.
    #[serde(default)]
    pub config: BTreeMap<String, Scalar>,
}

/// A declared kernel parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArgDef {
    /// Parameter name, e.g. `in_ptr0`.
    pub name: String,
    /// Declared type as the compiler wrote it (`*fp32`, `i32`, `const float*`).
    #[serde(default, rename = "type")]
    pub ty: String,
    /// How the kernel uses the argument.
    #[serde(default)]
    pub access: Access,
}

/// How a kernel uses an argument, as declared by the compiler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Read only (`in_ptr*`, `const T*`, scalars).
    #[default]
    In,
    /// Written without being read first (`out_ptr*`): its bytes before the
    /// launch do not matter.
    Out,
    /// Read and written (`in_out_ptr*`, mutated arguments).
    Inout,
}

impl Access {
    /// Its name in the trace and in reports: `in`, `out`, `inout`.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::In => "in",
            Access::Out => "out",
            Access::Inout => "inout",
        }
    }

    /// The kernel reads the argument's value before the launch.
    pub fn reads(self) -> bool {
        self != Access::Out
    }

    /// The kernel is declared to write the argument.
    pub fn writes(self) -> bool {
        self != Access::In
    }
}

/// An interned tensor layout: dtype, shape and strides of a view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayoutDef {
    /// Identifier referenced by tensor arguments.
    pub id: u64,
    /// torch dtype name without the `torch.` prefix, e.g. `float32`.
    pub dtype: String,
    /// Size of one element in bytes.
    pub itemsize: u32,
    /// Sizes, outermost first.
    pub shape: Vec<u64>,
    /// Strides in elements.
    pub stride: Vec<i64>,
    /// Storage offset in elements.
    #[serde(default)]
    pub offset: u64,
    /// Number of bytes from the first element's address to one past the
    /// last element's last byte (its extent; `span` on disk).
    #[serde(rename = "span")]
    pub extent: u64,
}

impl LayoutDef {
    /// The extent of a view with these sizes and non-negative strides:
    /// `(sum((shape[i] - 1) * stride[i]) + 1) * itemsize`, or 0 when empty.
    pub fn extent_of(shape: &[u64], stride: &[i64], itemsize: u32) -> u64 {
        if shape.contains(&0) {
            return 0;
        }
        let last: u64 = shape
            .iter()
            .zip(stride)
            .map(|(&n, &s)| (n - 1).saturating_mul(s.unsigned_abs()))
            .fold(0u64, u64::saturating_add);
        last.saturating_add(1).saturating_mul(u64::from(itemsize))
    }

    /// Whether a view with these sizes and strides (in elements) lies
    /// back to back in row-major order, reading its bytes once each in
    /// memory order (sizes of 1 may have any stride).
    pub fn is_row_major(shape: &[u64], stride: &[i64]) -> bool {
        let mut dense = 1i64;
        for (&size, &stride) in shape.iter().zip(stride).rev() {
            if size != 1 && stride != dense {
                return false;
            }
            dense = dense.saturating_mul(size as i64);
        }
        true
    }
}

/// One launch (or aten op call), in execution order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchRecord {
    /// Sequence number, increasing through the trace.
    #[serde(rename = "i")]
    pub seq: u64,
    /// Kernel id.
    #[serde(rename = "k")]
    pub kernel: u64,
    /// Grid, one to three dimensions; empty for aten ops.
    #[serde(rename = "g", default)]
    pub grid: Vec<u64>,
    /// Raw stream handle (0 for the default stream and for CPU).
    #[serde(rename = "s", default)]
    pub stream: u64,
    /// Device ordinal; -1 for CPU.
    #[serde(rename = "d", default)]
    pub device: i32,
    /// OS thread id of the launching thread.
    #[serde(rename = "th", default)]
    pub thread: u64,
    /// Nanoseconds since the header's `created_ns`.
    #[serde(rename = "ts", default)]
    pub ts: u64,
    /// Made while autotuning, not by the program itself.
    #[serde(rename = "at", default, skip_serializing_if = "is_false")]
    pub autotune: bool,
    /// Arguments in the kernel's declared order.
    #[serde(rename = "a", default)]
    pub args: Vec<ArgValue>,
    /// (1.12) In a `captured` record, the CUDA graph the launch was
    /// captured into: it did not run when it was written but runs at each
    /// of the graph's replays, and its tensor arguments' `pre` and `post`
    /// are slots of the graph's table, not hashes (a `replay` record holds
    /// the hashes).
    #[serde(rename = "cg", default, skip_serializing_if = "Option::is_none")]
    pub captured: Option<Captured>,
    /// (1.18) The `nn.Module` path the op was called in (`layers.1.mlp`,
    /// the empty string for the outermost module), when the recorder was
    /// asked for samples and the op ran eagerly inside a module's call.
    #[serde(rename = "m", default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
}

/// Where a captured launch sits in its CUDA graph (1.12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Captured {
    /// The graph's id, as its `cuda_graph` and `replay` records name it.
    #[serde(rename = "g")]
    pub graph: u64,
    /// The launch's place among the graph's launches, from 0.
    #[serde(rename = "i")]
    pub index: u32,
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[cfg(test)]
mod tests {
    use super::LayoutDef;

    #[test]
    fn only_dense_row_major_views_read_their_bytes_in_memory_order() {
        let row_major = LayoutDef::is_row_major;
        // The same 4096 x 1024 buffer as [8, 512, 1024] and as [4096, 1024].
        assert!(row_major(&[8, 512, 1024], &[524288, 1024, 1]));
        assert!(row_major(&[4096, 1024], &[1024, 1]));
        // Size-1 dimensions read nothing, whatever their stride.
        assert!(row_major(&[1, 4096, 1, 1024], &[7, 1024, 3, 1]));
        assert!(row_major(&[], &[]));
        // Transposed, sliced or strided: another order, or gaps.
        assert!(!row_major(&[1024, 4096], &[1, 1024]));
        assert!(!row_major(&[4096, 512], &[1024, 1]));
        assert!(!row_major(&[2048], &[2]));
    }
}

//! Tensor metadata read straight from torch's C++ `TensorImpl`, for the
//! recorder's hot path.
//!
//! Reading a tensor's address, shape, strides, offset, dtype and device
//! through its Python attributes takes seven calls into the interpreter,
//! several microseconds per tensor on a loaded host. Every field is a plain
//! member of the tensor's `TensorImpl`, so this module finds where each one
//! lives by probing tensors whose metadata is known (nothing about torch's
//! layout is written down here), checks the result on every probe, and
//! from then on reads a tensor in a few memory loads.
//!
//! Only plain dense tensors are read this way: their `TensorImpl` has the
//! same vtable as the probes' (sparse, quantized, nested and wrapper tensors
//! have their own subclasses and take the attribute path). The first reads
//! on each kind of device are compared with the attribute path, and one in
//! [`SPOT_CHECK`] afterwards; any disagreement turns the fast path off for
//! the rest of the process.

use pyo3::intern;
use pyo3::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Bytes of a `TensorImpl` searched for fields (torch 2.x's is 184).
const IMPL_SCAN: usize = 184;
/// Bytes of a `StorageImpl` searched for its data pointer.
const STORAGE_SCAN: usize = 48;
/// Bytes of a `StorageImpl` searched for its size in bytes (torch 2.x's
/// keeps it right after the data pointer's 32 bytes).
const STORAGE_SIZE_SCAN: usize = 96;
/// Bytes of the Python object searched for its `TensorImpl` pointer.
const OBJECT_SCAN: usize = 64;
/// Most dimensions read (more: the attribute path).
const MAX_NDIM: u64 = 64;
/// Reads compared with the attribute path before a device kind is trusted.
const FIRST_CHECKS: u32 = 16;
/// After that, one read in this many is compared again.
pub const SPOT_CHECK: u32 = 1024;
/// The storage offset of the first probe (a value no other field holds).
const PROBE_OFFSET: u64 = 12347;

/// [`Meta::device`] of a tensor in host memory.
pub const HOST: i32 = -1;
/// [`Meta::device`] of a tensor neither on the host nor on a CUDA device.
pub const ELSEWHERE: i32 = -2;

/// A tensor's sizes or strides: most tensors have few dimensions, kept
/// inline so that reading one allocates nothing.
pub type Dims = smallvec::SmallVec<[u64; 6]>;

/// A tensor's metadata, however it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// CUDA device index, [`HOST`] or [`ELSEWHERE`].
    pub device: i32,
    pub ptr: u64,
    pub dtype: &'static str,
    pub itemsize: u32,
    pub shape: Dims,
    pub stride: Dims,
    pub offset: u64,
    /// Bytes the tensor's storage holds, from its start: a view reaching
    /// past them (a parameter whose storage was freed by resizing it to
    /// nothing, as FSDP does) has no memory to read.
    pub storage_bytes: u64,
}

/// Where each field lives, as probed.
struct Offsets {
    /// In the Python object: the `TensorImpl` pointer.
    object_impl: usize,
    /// The vtable of a dense `TensorImpl`.
    vtable: u64,
    /// In the `TensorImpl`: the number of dimensions, followed by the
    /// inline sizes and strides (or a pointer to both past `inline`).
    ndim: usize,
    inline: usize,
    storage_offset: usize,
    storage: usize,
    dtype: usize,
    /// Device type byte, then the index byte.
    device: usize,
    /// In the `StorageImpl`: the data pointer and the size in bytes.
    data: usize,
    storage_bytes: usize,
    dtypes: rustc_hash::FxHashMap<u16, (&'static str, u32)>,
}

/// Device kinds as the device byte holds them.
const DEVICE_CPU: u8 = 0;
const DEVICE_CUDA: u8 = 1;

/// Reads `u64` at `addr`.
///
/// # Safety
/// `addr..addr + 8` must be readable.
unsafe fn word(addr: u64) -> u64 {
    unsafe { (addr as *const u64).read_unaligned() }
}

/// Reads the byte at `addr`.
///
/// # Safety
/// `addr` must be readable.
unsafe fn byte(addr: u64) -> u8 {
    unsafe { (addr as *const u8).read() }
}

/// What the probes tell, read through their attributes.
struct Probe<'py> {
    object: Bound<'py, PyAny>,
    meta: Meta,
    impl_addr: u64,
    storage_addr: u64,
    storage_data: u64,
    storage_bytes: u64,
}

/// The first position in `0..limit` (stepping by `step`) where `matches`
/// holds for every probe.
fn find(limit: usize, step: usize, matches: impl Fn(usize) -> bool) -> Option<usize> {
    (0..limit).step_by(step).find(|&at| matches(at))
}

impl Offsets {
    /// Finds every field from `probes` (see `tritontui._tensors.impl_probes`:
    /// the first is a 3-d float64 view at storage offset 12347, the second
    /// a 7-d view, the rest pairs of small tensors of each dtype), then
    /// checks every probe reads back as its attributes say.
    fn probe(probes: &[Probe<'_>]) -> Option<Offsets> {
        let first = probes.first()?;
        let deep = probes.get(1)?;
        // SAFETY (every read below): each address lies inside a live probe's
        // Python object, TensorImpl or StorageImpl, within the scanned sizes.
        let object_impl = find(OBJECT_SCAN - 7, 8, |at| {
            probes
                .iter()
                .all(|p| unsafe { word(p.object.as_ptr() as u64 + at as u64) } == p.impl_addr)
        })?;
        let vtable = unsafe { word(first.impl_addr) };
        let rank = first.meta.shape.len();
        let ndim = find(IMPL_SCAN - 8 * (rank + 1), 8, |at| {
            let base = first.impl_addr + at as u64;
            (unsafe { word(base) }) == rank as u64
                && first
                    .meta
                    .shape
                    .iter()
                    .enumerate()
                    .all(|(i, &n)| unsafe { word(base + 8 + 8 * i as u64) } == n)
        })?;
        let strides_at = find(IMPL_SCAN.checked_sub(ndim + 8 + 8 * rank)?, 8, |at| {
            let base = first.impl_addr + (ndim + 8 + at) as u64;
            at >= 8 * rank
                && first
                    .meta
                    .stride
                    .iter()
                    .enumerate()
                    .all(|(i, &s)| unsafe { word(base + 8 * i as u64) } == s)
        })?;
        let inline = strides_at / 8;
        let storage_offset = find(
            IMPL_SCAN - 7,
            8,
            |at| unsafe { word(first.impl_addr + at as u64) } == PROBE_OFFSET,
        )?;
        let storage = find(IMPL_SCAN - 7, 8, |at| {
            probes
                .iter()
                .all(|p| unsafe { word(p.impl_addr + at as u64) } == p.storage_addr)
        })?;
        let data = find(STORAGE_SCAN - 7, 8, |at| {
            probes
                .iter()
                .all(|p| unsafe { word(p.storage_addr + at as u64) } == p.storage_data)
        })?;
        let storage_bytes = find(STORAGE_SIZE_SCAN - 7, 8, |at| {
            probes
                .iter()
                .all(|p| unsafe { word(p.storage_addr + at as u64) } == p.storage_bytes)
        })?;
        let u16_at = |p: &Probe<'_>, at: usize| unsafe {
            ((p.impl_addr + at as u64) as *const u16).read_unaligned()
        };
        let dtype = find(IMPL_SCAN - 1, 2, |at| {
            let mut seen: HashMap<u16, &str> = HashMap::new();
            probes
                .iter()
                .all(|p| *seen.entry(u16_at(p, at)).or_insert(p.meta.dtype) == p.meta.dtype)
                && {
                    let names: std::collections::HashSet<&str> = seen.values().copied().collect();
                    names.len() == seen.len()
                }
        })?;
        let device = find(IMPL_SCAN - 2, 1, |at| {
            probes.iter().filter(|p| p.meta.device == HOST).all(|p| {
                let base = p.impl_addr + at as u64;
                (unsafe { (byte(base), byte(base + 1), byte(base + 2)) }) == (DEVICE_CPU, 0xff, 1)
            })
        })?;
        let dtypes = probes
            .iter()
            .map(|p| (u16_at(p, dtype), (p.meta.dtype, p.meta.itemsize)))
            .collect();
        let offsets = Offsets {
            object_impl,
            vtable,
            ndim,
            inline,
            storage_offset,
            storage,
            dtype,
            device,
            data,
            storage_bytes,
            dtypes,
        };
        let agree = probes.iter().all(|p| {
            // SAFETY: live probes.
            unsafe { offsets.read(p.object.as_ptr() as u64) }.as_ref() == Some(&p.meta)
        }) && deep.meta.shape.len() > inline;
        agree.then_some(offsets)
    }

    /// Reads a tensor, or None when it is not a dense tensor on the host or
    /// a CUDA device, or looks unlike the probes.
    ///
    /// # Safety
    /// `object` must be a live `torch.Tensor` (or `torch.nn.Parameter`)
    /// Python object, of exactly that type.
    unsafe fn read(&self, object: u64) -> Option<Meta> {
        unsafe {
            let imp = word(object + self.object_impl as u64);
            if imp == 0 || word(imp) != self.vtable {
                return None;
            }
            let ndim = word(imp + self.ndim as u64);
            if ndim > MAX_NDIM {
                return None;
            }
            let dims = if ndim as usize <= self.inline {
                imp + self.ndim as u64 + 8
            } else {
                word(imp + self.ndim as u64 + 8)
            };
            let stride_base = if ndim as usize <= self.inline {
                dims + 8 * self.inline as u64
            } else {
                dims + 8 * ndim
            };
            let shape: Dims = (0..ndim).map(|i| word(dims + 8 * i)).collect();
            let stride: Dims = (0..ndim).map(|i| word(stride_base + 8 * i)).collect();
            let storage = word(imp + self.storage as u64);
            if storage == 0 {
                return None;
            }
            let code = ((imp + self.dtype as u64) as *const u16).read_unaligned();
            let &(dtype, itemsize) = self.dtypes.get(&code)?;
            let device = match byte(imp + self.device as u64) {
                DEVICE_CPU => HOST,
                DEVICE_CUDA => i32::from(byte(imp + self.device as u64 + 1) as i8),
                _ => return None,
            };
            let offset = word(imp + self.storage_offset as u64);
            let ptr = word(storage + self.data as u64) + offset * u64::from(itemsize);
            Some(Meta {
                device,
                ptr,
                dtype,
                itemsize,
                shape,
                stride,
                offset,
                storage_bytes: word(storage + self.storage_bytes as u64),
            })
        }
    }
}

/// The probed offsets (None once probing failed or a check disagreed).
static OFFSETS: pyo3::sync::PyOnceLock<Option<Offsets>> = pyo3::sync::PyOnceLock::new();
static DISABLED: AtomicBool = AtomicBool::new(false);
/// Reads compared so far, on the host and on CUDA devices.
static CHECKED: [AtomicU32; 2] = [AtomicU32::new(0), AtomicU32::new(0)];

/// Whether tensors are being read from their `TensorImpl`: probing
/// succeeded and no check has disagreed since.
pub fn active(py: Python<'_>) -> bool {
    !DISABLED.load(Ordering::Relaxed) && OFFSETS.get(py).is_some_and(Option::is_some)
}

/// Whether this read should also be compared with the attribute path.
fn wants_check(meta: &Meta) -> bool {
    let checked = &CHECKED[usize::from(meta.device >= 0)];
    let n = checked.fetch_add(1, Ordering::Relaxed);
    n < FIRST_CHECKS || n.is_multiple_of(SPOT_CHECK)
}

/// Finds the fields once per process (before any hook is installed: the
/// probes are made with torch). Returns whether the fast path is on.
pub fn probe(
    py: Python<'_>,
    slow: &mut dyn FnMut(&Bound<'_, PyAny>) -> PyResult<Option<Meta>>,
) -> PyResult<bool> {
    let offsets = OFFSETS.get_or_try_init(py, || probe_offsets(py, slow))?;
    Ok(offsets.is_some() && !DISABLED.load(Ordering::Relaxed))
}

/// Reads `value` (of exactly type `torch.Tensor` or `torch.nn.Parameter`)
/// from its `TensorImpl`; `slow` reads it through its attributes, for the
/// checks. None: use the attribute path (also before [`probe`]).
pub fn read(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    slow: &mut dyn FnMut(&Bound<'_, PyAny>) -> PyResult<Option<Meta>>,
) -> PyResult<Option<Meta>> {
    if DISABLED.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let Some(Some(offsets)) = OFFSETS.get(py) else {
        return Ok(None);
    };
    // SAFETY: the caller checked the type; `value` is alive.
    let Some(meta) = (unsafe { offsets.read(value.as_ptr() as u64) }) else {
        return Ok(None);
    };
    if wants_check(&meta) && slow(value)?.as_ref() != Some(&meta) {
        DISABLED.store(true, Ordering::Relaxed);
        return Ok(None);
    }
    Ok(Some(meta))
}

/// Probes with the tensors `tritontui._tensors.impl_probes()` makes.
fn probe_offsets(
    py: Python<'_>,
    slow: &mut dyn FnMut(&Bound<'_, PyAny>) -> PyResult<Option<Meta>>,
) -> PyResult<Option<Offsets>> {
    let tensors = py
        .import(intern!(py, "tritontui._tensors"))?
        .call_method0(intern!(py, "impl_probes"))?;
    let mut probes = Vec::new();
    for object in tensors.try_iter()? {
        let object = object?;
        let Some(meta) = slow(&object)? else {
            return Ok(None);
        };
        let storage = object.call_method0(intern!(py, "untyped_storage"))?;
        probes.push(Probe {
            impl_addr: object.getattr(intern!(py, "_cdata"))?.extract()?,
            storage_addr: storage.getattr(intern!(py, "_cdata"))?.extract()?,
            storage_data: storage.call_method0(intern!(py, "data_ptr"))?.extract()?,
            storage_bytes: storage.call_method0(intern!(py, "nbytes"))?.extract()?,
            object,
            meta,
        });
    }
    if probes.first().map(|p| p.meta.offset) != Some(PROBE_OFFSET) {
        return Ok(None);
    }
    Ok(Offsets::probe(&probes))
}

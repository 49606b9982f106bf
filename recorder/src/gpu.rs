//! `tthash64-v1` of CUDA tensors, computed on the device, on the stream of
//! the launch being recorded, without the recorded program ever waiting.
//!
//! A launch's hashes form a [`Batch`]: a range of slots in a per-device
//! result ring is zeroed on the stream, each hash kernel adds its words'
//! mixes into its slot, and after the launch the sums are copied into pinned
//! host memory and an event is recorded, all asynchronously. The writer
//! thread waits for the event ([`Finished::wait`]) and finalises the sums.
//!
//! The kernels are PTX kept in `assets/cuda/` (compiled by the driver for
//! the GPU at hand), so no CUDA toolkit is needed. Every entry point checks
//! that the driver library loads before calling into it, because cudarc
//! panics rather than failing when it does not.

use crate::background::Delivered;
use crate::hash::{LEN_MUL, fmix64};
use cudarc::driver::result;
use cudarc::driver::sys;
use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// The kernels, compiled from `assets/cuda/tthash.cu` for compute_80.
const PTX: &str = include_str!("../../assets/cuda/tthash.ptx");

/// Slots (one u64 each) a launch may use: one per hash, [`STATS_SLOTS`]
/// per summary.
pub const BATCH: usize = 1024;
/// Slots a summary of one tensor takes (see `ttstats` in the PTX source).
pub const STATS_SLOTS: usize = 69;
/// Batches the ring holds per device.
const RANGES: usize = 1024;
/// Most dimensions a strided view may keep after merging.
const MAX_DIMS: usize = 6;

/// Why the GPU could not hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuError(pub String);

impl std::fmt::Display for GpuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<result::DriverError> for GpuError {
    fn from(e: result::DriverError) -> Self {
        GpuError(format!("CUDA driver: {e:?}"))
    }
}

type Result<T> = std::result::Result<T, GpuError>;

/// Whether the CUDA driver library can be loaded (it is never called
/// otherwise).
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen libcuda.
    unsafe { sys::is_culib_present() }
}

/// Which ranges of a ring are free, shared with the writer thread.
struct Free {
    ranges: Mutex<Vec<bool>>,
    released: Condvar,
}

/// Per-device state: the primary context, the kernels and the result ring.
struct Device {
    ctx: sys::CUcontext,
    contiguous: sys::CUfunction,
    strided: sys::CUfunction,
    stats: sys::CUfunction,
    max_blocks: u32,
    ring_device: sys::CUdeviceptr,
    ring_host: *mut u64,
    free: Arc<Free>,
    next: usize,
}

// SAFETY: the raw handles are process-wide driver objects; the pinned ring
// is only written by the driver and read by the writer thread after the
// event that orders it, for ranges handed out one at a time.
unsafe impl Send for Device {}

static DEVICES: OnceLock<Mutex<HashMap<i32, Device>>> = OnceLock::new();

fn devices() -> Result<std::sync::MutexGuard<'static, HashMap<i32, Device>>> {
    DEVICES
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .map_err(|_| GpuError("poisoned lock".into()))
}

/// The device a batch was begun on.
fn opened(map: &HashMap<i32, Device>, ordinal: i32) -> Result<&Device> {
    map.get(&ordinal)
        .ok_or_else(|| GpuError(format!("device {ordinal} is not open")))
}

impl Device {
    fn open(ordinal: i32) -> Result<Device> {
        if !driver_present() {
            return Err(GpuError("the CUDA driver library is not installed".into()));
        }
        result::init()?;
        let dev = result::device::get(ordinal)?;
        // SAFETY: the primary context is the one torch uses; retaining it
        // keeps it alive and shares its address space.
        let ctx = unsafe { result::primary_ctx::retain(dev)? };
        unsafe { result::ctx::set_current(ctx)? };
        let ptx = CString::new(PTX).map_err(|_| GpuError("PTX holds a NUL byte".into()))?;
        // SAFETY: a NUL-terminated PTX image.
        let module = unsafe { result::module::load_data(ptx.as_ptr() as *const c_void)? };
        let function = |name: &str| -> Result<sys::CUfunction> {
            let name = CString::new(name).map_err(|_| GpuError("bad kernel name".into()))?;
            // SAFETY: the module was just loaded.
            Ok(unsafe { result::module::get_function(module, name)? })
        };
        let sms = unsafe {
            result::device::get_attribute(
                dev,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )?
        };
        let slots = BATCH * RANGES;
        // SAFETY: plain allocations of `slots` u64s, owned by this Device
        // for the life of the process.
        let ring_device = unsafe { result::malloc_sync(slots * 8)? };
        let ring_host =
            unsafe { result::malloc_host(slots * 8, sys::CU_MEMHOSTALLOC_PORTABLE)? } as *mut u64;
        Ok(Device {
            ctx,
            contiguous: function("tthash_contiguous")?,
            strided: function("tthash_strided")?,
            stats: function("ttstats")?,
            max_blocks: (sms.max(1) as u32) * 16,
            ring_device,
            ring_host,
            free: Arc::new(Free {
                ranges: Mutex::new(vec![true; RANGES]),
                released: Condvar::new(),
            }),
            next: 0,
        })
    }
}

/// The hashes of one launch, being computed on the device.
pub struct Batch {
    ordinal: i32,
    /// The raw `CUstream`, kept as an integer.
    stream: u64,
    range: usize,
    entries: Vec<Entry>,
    /// Slots of the range handed out so far.
    used: usize,
}

/// What one request of a batch delivers, from which slots.
#[derive(Debug, Clone, Copy)]
enum Entry {
    /// A hash of `len` bytes, from one slot.
    Hash { slot: usize, len: u64 },
    /// A summary, from [`STATS_SLOTS`] slots.
    Stats { slot: usize },
}

/// The float formats the summary kernel reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatsKind {
    Float32 = 0,
    Float16 = 1,
    BFloat16 = 2,
}

impl StatsKind {
    /// The kind of a dtype name, if the GPU summarises it.
    pub fn of(dtype: &str) -> Option<StatsKind> {
        match dtype {
            "float32" => Some(StatsKind::Float32),
            "float16" => Some(StatsKind::Float16),
            "bfloat16" => Some(StatsKind::BFloat16),
            _ => None,
        }
    }

    fn itemsize(self) -> u64 {
        if self == StatsKind::Float32 { 4 } else { 2 }
    }
}

/// A batch whose results are on their way to the host.
pub struct Finished {
    ctx: sys::CUcontext,
    event: sys::CUevent,
    host: *const u64,
    entries: Vec<Entry>,
    free: Arc<Free>,
    range: usize,
}

// SAFETY: see `Device`; the event and host range belong to this batch alone.
unsafe impl Send for Finished {}

/// The arguments of `tthash_strided`'s `Dims` parameter.
#[repr(C)]
struct Dims {
    shape: [u64; MAX_DIMS],
    stride: [u64; MAX_DIMS],
}

/// Drops size-1 dimensions and merges dimensions that are contiguous with
/// each other, so most views keep one to three.
pub fn coalesce(shape: &[u64], stride: &[u64]) -> (Vec<u64>, Vec<u64>) {
    let mut dims: Vec<(u64, u64)> = Vec::new();
    for (&n, &s) in shape.iter().zip(stride) {
        if n == 1 {
            continue;
        }
        match dims.last_mut() {
            Some(last) if last.1 == n * s => *last = (last.0 * n, s),
            _ => dims.push((n, s)),
        }
    }
    dims.into_iter().unzip()
}

impl Batch {
    /// Reserves result slots on `ordinal` and zeroes them on `stream` (a
    /// raw `cudaStream_t`, 0 for the legacy default stream). Waits only if
    /// every range is still in use.
    pub fn begin(ordinal: i32, stream: u64) -> Result<Batch> {
        let mut map = devices()?;
        let device = match map.entry(ordinal) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(Device::open(ordinal)?),
        };
        unsafe { result::ctx::set_current(device.ctx)? };
        let range = device.next % RANGES;
        {
            let mut free = device
                .free
                .ranges
                .lock()
                .map_err(|_| GpuError("poisoned lock".into()))?;
            while !free[range] {
                free = device
                    .free
                    .released
                    .wait(free)
                    .map_err(|_| GpuError("poisoned lock".into()))?;
            }
            free[range] = false;
        }
        device.next += 1;
        // SAFETY: the range lies inside the ring allocation.
        unsafe {
            result::memset_d8_async(
                device.ring_device + (range * BATCH * 8) as u64,
                0,
                BATCH * 8,
                stream as sys::CUstream,
            )?
        };
        Ok(Batch {
            ordinal,
            stream,
            range,
            entries: Vec::new(),
            used: 0,
        })
    }

    /// The next `n` free slots of the batch (their index and device
    /// address), or None when the batch is full.
    fn take_slots(&mut self, device: &Device, n: usize) -> Option<(usize, u64)> {
        if self.used + n > BATCH {
            return None;
        }
        let slot = self.used;
        self.used += n;
        Some((
            slot,
            device.ring_device + ((self.range * BATCH + slot) * 8) as u64,
        ))
    }

    /// Enqueues the hash of a view of device memory; returns its index in
    /// the batch, or None when the batch has no slot left.
    ///
    /// # Safety
    /// `ptr` must be the address of the first element of a live device
    /// allocation covering the view, in the current device's context, and
    /// stay valid until the work on the stream has run.
    pub unsafe fn hash(
        &mut self,
        ptr: u64,
        itemsize: u64,
        shape: &[u64],
        stride: &[u64],
    ) -> Result<Option<usize>> {
        let map = devices()?;
        let device = opened(&map, self.ordinal)?;
        let numel: u64 = shape.iter().product();
        let nbytes = numel * itemsize;
        let Some((slot, out)) = self.take_slots(device, 1) else {
            return Ok(None);
        };
        let (shape, stride) = coalesce(shape, stride);
        if nbytes > 0 {
            let contiguous = shape.len() <= 1
                && stride.first().is_none_or(|&s| s == 1)
                && ptr.is_multiple_of(16);
            let (mut data, mut len, mut numel, mut itemsize, mut out) =
                (ptr, nbytes, numel, itemsize, out);
            if contiguous {
                let work = (nbytes / 16).div_ceil(u64::from(THREADS) * 4);
                let params = [
                    &mut data as *mut u64 as *mut c_void,
                    &mut len as *mut u64 as *mut c_void,
                    &mut out as *mut u64 as *mut c_void,
                ];
                unsafe { self.launch(device, device.contiguous, work, params)? };
            } else {
                let (mut ndim, mut dims) = dims(&shape, &stride)?;
                let work = nbytes.div_ceil(8).div_ceil(u64::from(THREADS));
                let params = [
                    &mut data as *mut u64 as *mut c_void,
                    &mut numel as *mut u64 as *mut c_void,
                    &mut itemsize as *mut u64 as *mut c_void,
                    &mut ndim as *mut i32 as *mut c_void,
                    &mut dims as *mut Dims as *mut c_void,
                    &mut out as *mut u64 as *mut c_void,
                ];
                unsafe { self.launch(device, device.strided, work, params)? };
            }
        }
        self.entries.push(Entry::Hash { slot, len: nbytes });
        Ok(Some(self.entries.len() - 1))
    }

    /// Enqueues the summary statistics of a float view; returns its index
    /// in the batch, or None when the batch has no room for it.
    ///
    /// # Safety
    /// As for [`Batch::hash`].
    pub unsafe fn stats(
        &mut self,
        ptr: u64,
        kind: StatsKind,
        shape: &[u64],
        stride: &[u64],
    ) -> Result<Option<usize>> {
        let map = devices()?;
        let device = opened(&map, self.ordinal)?;
        let numel: u64 = shape.iter().product();
        let Some((slot, out)) = self.take_slots(device, STATS_SLOTS) else {
            return Ok(None);
        };
        let (shape, stride) = coalesce(shape, stride);
        if numel > 0 {
            let (mut ndim, mut dims) = dims(&shape, &stride)?;
            let (mut data, mut numel_param, mut out) = (ptr, numel, out);
            let mut kind_param = kind as i32;
            let params = [
                &mut data as *mut u64 as *mut c_void,
                &mut numel_param as *mut u64 as *mut c_void,
                &mut kind_param as *mut i32 as *mut c_void,
                &mut ndim as *mut i32 as *mut c_void,
                &mut dims as *mut Dims as *mut c_void,
                &mut out as *mut u64 as *mut c_void,
            ];
            let work = (numel * kind.itemsize())
                .div_ceil(8)
                .div_ceil(u64::from(THREADS));
            unsafe { self.launch(device, device.stats, work, params)? };
        }
        self.entries.push(Entry::Stats { slot });
        Ok(Some(self.entries.len() - 1))
    }

    /// Launches `function` on the batch's stream with enough blocks for
    /// `work` blocks' worth of data, at most the device's resident blocks.
    unsafe fn launch<const N: usize>(
        &self,
        device: &Device,
        function: sys::CUfunction,
        work: u64,
        mut params: [*mut c_void; N],
    ) -> Result<()> {
        let grid = work.clamp(1, u64::from(device.max_blocks)) as u32;
        // SAFETY: the parameters point at locals of the caller, which the
        // driver copies before this returns.
        unsafe {
            result::launch_kernel(
                function,
                (grid, 1, 1),
                (THREADS, 1, 1),
                0,
                self.stream as sys::CUstream,
                &mut params,
            )?
        };
        Ok(())
    }

    /// Enqueues the copy of the results to the host and an event after it.
    pub fn finish(self) -> Result<Finished> {
        let map = devices()?;
        let device = opened(&map, self.ordinal)?;
        unsafe { result::ctx::set_current(device.ctx)? };
        // SAFETY: the slice is this batch's range of the pinned ring.
        let host = unsafe { device.ring_host.add(self.range * BATCH) };
        let used = self.used.max(1);
        unsafe {
            let dst = std::slice::from_raw_parts_mut(host, used);
            result::memcpy_dtoh_async(
                dst,
                device.ring_device + (self.range * BATCH * 8) as u64,
                self.stream as sys::CUstream,
            )?;
        }
        let event = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)?;
        unsafe { result::event::record(event, self.stream as sys::CUstream)? };
        Ok(Finished {
            ctx: device.ctx,
            event,
            host,
            entries: self.entries,
            free: Arc::clone(&device.free),
            range: self.range,
        })
    }
}

/// Threads per block of every kernel.
const THREADS: u32 = 256;

/// The `Dims` parameter of a coalesced view.
fn dims(shape: &[u64], stride: &[u64]) -> Result<(i32, Dims)> {
    if shape.len() > MAX_DIMS {
        return Err(GpuError(format!(
            "a view of more than {MAX_DIMS} dimensions"
        )));
    }
    let mut dims = Dims {
        shape: [1; MAX_DIMS],
        stride: [0; MAX_DIMS],
    };
    dims.shape[..shape.len()].copy_from_slice(shape);
    dims.stride[..stride.len()].copy_from_slice(stride);
    Ok((shape.len() as i32, dims))
}

impl Finished {
    /// Waits for the device (on the caller's thread) and returns the
    /// results in the order they were enqueued.
    pub fn wait(self) -> Result<Vec<Delivered>> {
        unsafe { result::ctx::set_current(self.ctx)? };
        let waited = unsafe { result::event::synchronize(self.event) };
        let _ = unsafe { result::event::destroy(self.event) };
        // SAFETY: the event orders the copy into these slots before here.
        let slot = |i: usize| unsafe { self.host.add(i).read_volatile() };
        let delivered = waited.map(|()| {
            self.entries
                .iter()
                .map(|entry| match *entry {
                    Entry::Hash { slot: i, len } => {
                        Delivered::Hash(fmix64(slot(i) ^ len.wrapping_mul(LEN_MUL)))
                    }
                    Entry::Stats { slot: i } => {
                        let slots: Vec<u64> = (i..i + STATS_SLOTS).map(slot).collect();
                        Delivered::Stats(crate::stats::from_device_slots(&slots))
                    }
                })
                .collect()
        });
        if let Ok(mut free) = self.free.ranges.lock() {
            free[self.range] = true;
            self.free.released.notify_all();
        }
        Ok(delivered?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_dimensions_merge() {
        assert_eq!(coalesce(&[4, 1, 8], &[8, 8, 1]), (vec![32], vec![1]));
        // A transpose stays two-dimensional.
        assert_eq!(coalesce(&[8, 4], &[1, 8]), (vec![8, 4], vec![1, 8]));
        assert_eq!(coalesce(&[], &[]), (vec![], vec![]));
        assert_eq!(
            coalesce(&[2, 3, 4], &[24, 4, 1]),
            (vec![2, 12], vec![24, 1])
        );
    }
}

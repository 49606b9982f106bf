//! The devices the recorder hashes on, each opened once (its primary
//! context, the kernels loaded from PTX, the result ring in host-mapped
//! memory) and found without a lock at every launch.

use super::driver::{GpuError, Result, driver_present, poisoned};
use cudarc::driver::{result, sys};
use std::ffi::{CString, c_void};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// The kernels, compiled from `assets/cuda/tthash.cu` for compute_80.
const PTX: &str = include_str!("../../../assets/cuda/tthash.ptx");

/// Slots (one u64 each) a launch may use: one per hash, more per summary,
/// samples and row (a foreach op over 16 parameters with `samples` takes
/// some 600, with `stats` too some 1,700; with `rows`, a matmul of a
/// 1,024-row input into a 1,024-row output some 2,050, an addmm whose
/// bias, input and output all have 1,024 rows some 3,080).
pub(super) const BATCH: usize = 4096;
/// Batches the ring holds per device.
pub(super) const RANGES: usize = 1024;
/// What a host-mapped result slot holds until a kernel writes it (no raw
/// hash sum or summary word is expected to equal it; if one does, the
/// event still says when the batch is done).
pub(super) const UNWRITTEN: u64 = u64::MAX;
/// Threads per block of every kernel.
pub(super) const THREADS: u32 = 256;

/// What the writer thread hands back: free ranges of the ring, and events
/// to record again.
pub(super) struct Returned {
    pub(super) ranges: Mutex<Vec<bool>>,
    pub(super) released: Condvar,
    pub(super) events: Mutex<Vec<usize>>,
}

impl Returned {
    /// An event to record, from the pool or new (in the current context).
    pub(super) fn event(&self) -> Result<sys::CUevent> {
        if let Some(event) = self.events.lock().map_err(poisoned)?.pop() {
            return Ok(event as sys::CUevent);
        }
        Ok(result::event::create(
            sys::CUevent_flags::CU_EVENT_DISABLE_TIMING,
        )?)
    }

    pub(super) fn release_range(&self, range: usize) {
        if let Ok(mut free) = self.ranges.lock() {
            free[range] = true;
            self.released.notify_all();
        }
    }
}

/// Where the kernels put results: `Results` in the PTX source.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct Results {
    pub(super) acc: u64,
    pub(super) arrived: u64,
    pub(super) host: u64,
}

/// What a batch needs to enqueue work on its device, copied into it when
/// it begins (`Batch::begin`) so that enqueuing takes no lock.
#[derive(Clone, Copy)]
pub(super) struct Kernels {
    pub(super) ctx: sys::CUcontext,
    pub(super) table: sys::CUfunction,
    pub(super) stats: sys::CUfunction,
    pub(super) sample: sys::CUfunction,
    pub(super) rows: sys::CUfunction,
    pub(super) max_blocks: u32,
    /// Blocks of `tthash_table` the device runs at once: what a table
    /// launch shares among its hashes.
    pub(super) resident: u32,
}

/// Per-device state: the primary context, the kernels and the result ring.
pub(super) struct Device {
    pub(super) kernels: Kernels,
    /// Device accumulators (u64) and arrival counters (u32), one per slot.
    pub(super) acc: sys::CUdeviceptr,
    pub(super) arrived: sys::CUdeviceptr,
    /// Host-mapped results, one u64 per slot, and their device address.
    pub(super) host: *mut u64,
    pub(super) host_on_device: sys::CUdeviceptr,
    pub(super) returned: Arc<Returned>,
    /// Batches begun so far: the next one takes the range after.
    pub(super) next: AtomicUsize,
}

// SAFETY: the raw handles are process-wide driver objects and never change
// after `open`; a range of the mapped ring is written by the device and
// read by the writer thread once every slot of it has arrived (or its
// event completed), and ranges are handed out one at a time (`next` is
// atomic, the free list behind a lock).
unsafe impl Send for Device {}
unsafe impl Sync for Device {}

/// Devices a process hashes on, by ordinal.
pub(super) const MAX_DEVICES: usize = 64;

/// The devices opened so far: found without a lock at every launch.
static DEVICES: [OnceLock<Device>; MAX_DEVICES] = [const { OnceLock::new() }; MAX_DEVICES];

/// The device `ordinal`, opened the first time.
pub(super) fn device(ordinal: i32) -> Result<&'static Device> {
    static OPENING: Mutex<()> = Mutex::new(());
    let slot = usize::try_from(ordinal)
        .ok()
        .and_then(|i| DEVICES.get(i))
        .ok_or_else(|| GpuError(format!("no CUDA device {ordinal} to hash on")))?;
    if let Some(device) = slot.get() {
        return Ok(device);
    }
    let _opening = OPENING.lock().map_err(poisoned)?;
    if let Some(device) = slot.get() {
        return Ok(device);
    }
    let device = Device::open(ordinal)?;
    Ok(slot.get_or_init(|| device))
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
        // SAFETY: plain allocations of `slots` entries, owned by this Device
        // for the life of the process; the kernels keep the accumulators and
        // counters zero between uses, starting from here.
        let (acc, arrived, host) = unsafe {
            let acc = result::malloc_sync(slots * 8)?;
            let arrived = result::malloc_sync(slots * 4)?;
            result::memset_d8_sync(acc, 0, slots * 8)?;
            result::memset_d8_sync(arrived, 0, slots * 4)?;
            let host = result::malloc_host(
                slots * 8,
                sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP,
            )? as *mut u64;
            std::slice::from_raw_parts_mut(host, slots).fill(UNWRITTEN);
            (acc, arrived, host)
        };
        let mut host_on_device: sys::CUdeviceptr = 0;
        // SAFETY: `host` was just allocated mapped.
        unsafe {
            sys::cuMemHostGetDevicePointer_v2(&mut host_on_device, host as *mut c_void, 0)
                .result()?
        };
        let table = function("tthash_table")?;
        // SAFETY: the function was just loaded.
        let per_sm = unsafe {
            result::occupancy::max_active_block_per_multiprocessor(table, THREADS as i32, 0)?
        };
        Ok(Device {
            kernels: Kernels {
                ctx,
                table,
                stats: function("ttstats")?,
                sample: function("ttsample")?,
                rows: function("ttrows")?,
                max_blocks: (sms.max(1) as u32) * 16,
                resident: (sms.max(1) * per_sm.max(1)) as u32,
            },
            acc,
            arrived,
            host,
            host_on_device,
            returned: Arc::new(Returned {
                ranges: Mutex::new(vec![true; RANGES]),
                released: Condvar::new(),
                events: Mutex::new(Vec::new()),
            }),
            next: AtomicUsize::new(0),
        })
    }

    /// The whole ring's result pointers, as the kernels take them (a
    /// slot is an index into the ring).
    pub(super) fn ring(&self) -> Results {
        Results {
            acc: self.acc,
            arrived: self.arrived,
            host: self.host_on_device,
        }
    }
}

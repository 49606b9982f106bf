//! The CUDA driver as the recorder calls it: its errors, whether its
//! library loads at all, the current context, and capture modes.

use cudarc::driver::{result, sys};
use std::sync::OnceLock;

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

pub(super) type Result<T> = std::result::Result<T, GpuError>;

/// Whether the CUDA driver library can be loaded (it is never called
/// otherwise). Asked once per process: cudarc's check opens the library
/// under each of its candidate names every time, which costs more than a
/// recorded launch may.
pub fn driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to dlopen libcuda.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

/// Whether a CUDA graph is being captured on `stream` (a raw
/// `cudaStream_t`): work enqueued there now would join the graph.
pub fn stream_capturing(stream: u64) -> Result<bool> {
    if !driver_present() {
        return Err(GpuError("the CUDA driver library is not installed".into()));
    }
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: a stream handle the recorded program is launching on, and a
    // status to write.
    unsafe { sys::cuStreamIsCapturing(stream as sys::CUstream, &mut status).result()? };
    Ok(status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
}

/// Lets this thread call into the driver while another thread captures a
/// graph in the global capture mode (`torch.cuda.graph`'s default), which
/// otherwise forbids the calls a recorder's waiting thread makes. Once per
/// thread.
pub(super) fn relax_capture_mode() -> Result<()> {
    thread_local! {
        static RELAXED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if RELAXED.get() {
        return Ok(());
    }
    let mut mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
    // SAFETY: writes this thread's mode, and the old one into `mode`.
    unsafe { sys::cuThreadExchangeStreamCaptureMode(&mut mode).result()? };
    RELAXED.set(true);
    Ok(())
}

/// Makes `ctx` current on this thread unless it already is (torch's
/// launching threads have it current).
pub(super) fn make_current(ctx: sys::CUcontext) -> Result<()> {
    let mut current: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: writes the calling thread's current context.
    unsafe { sys::cuCtxGetCurrent(&mut current).result()? };
    if current != ctx {
        unsafe { result::ctx::set_current(ctx)? };
    }
    Ok(())
}

/// The error of a lock a panicking thread held.
pub(super) fn poisoned<T>(_: T) -> GpuError {
    GpuError("poisoned lock".into())
}

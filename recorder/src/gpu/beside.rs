//! A stream of the recorder's own on each device, outside any CUDA graph,
//! where hash kernels run beside the recorded program's work instead of
//! between its kernels (a graph call's inputs: `inputs_beside`).
//!
//! A fork ([`Beside::fork`]) makes the side stream wait for everything the
//! program's stream enqueued so far; what is enqueued on the side stream
//! then runs beside what the program enqueues next. [`Beside::end`] marks
//! the end of the fork's work, and [`Beside::join`] makes a stream wait for
//! it. The events are shared by every fork on the device: a join waits for
//! the last end marked, which is its own fork's or a later one's (waiting
//! longer than needed, never less).

use super::device::{MAX_DEVICES, device};
use super::driver::{GpuError, Result, make_current};
use cudarc::driver::{result, sys};
use std::sync::OnceLock;

/// One device's side stream and the events its forks begin and end with.
/// Made once and never destroyed: a join may refer to them at any time.
pub struct Beside {
    ctx: sys::CUcontext,
    stream: sys::CUstream,
    begun: sys::CUevent,
    ended: sys::CUevent,
}

// SAFETY: process-wide driver handles that never change once made; the
// driver calls on them are thread-safe.
unsafe impl Send for Beside {}
unsafe impl Sync for Beside {}

/// The side streams made so far, by ordinal (or why one could not be).
static SIDES: [OnceLock<std::result::Result<Beside, GpuError>>; MAX_DEVICES] =
    [const { OnceLock::new() }; MAX_DEVICES];

impl Beside {
    /// The side stream of device `ordinal`, made the first time.
    pub fn of(ordinal: i32) -> Result<&'static Beside> {
        let slot = usize::try_from(ordinal)
            .ok()
            .and_then(|i| SIDES.get(i))
            .ok_or_else(|| GpuError(format!("no CUDA device {ordinal} to hash on")))?;
        slot.get_or_init(|| Beside::make(ordinal))
            .as_ref()
            .map_err(Clone::clone)
    }

    fn make(ordinal: i32) -> Result<Beside> {
        let ctx = device(ordinal)?.kernels.ctx;
        make_current(ctx)?;
        let event = || result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
        Ok(Beside {
            ctx,
            stream: result::stream::create(result::stream::StreamKind::NonBlocking)?,
            begun: event()?,
            ended: event()?,
        })
    }

    /// Makes the side stream wait for what `origin` (a raw stream of this
    /// device, not capturing) enqueued so far; returns the side stream.
    pub fn fork(&self, origin: u64) -> Result<u64> {
        make_current(self.ctx)?;
        // SAFETY: this device's events and streams, outside any capture.
        unsafe {
            result::event::record(self.begun, origin as sys::CUstream)?;
            result::stream::wait_event(
                self.stream,
                self.begun,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )?;
        }
        Ok(self.stream as u64)
    }

    /// Marks the end of the work enqueued on the side stream so far.
    pub fn end(&self) -> Result<()> {
        make_current(self.ctx)?;
        // SAFETY: as for `fork`.
        unsafe { result::event::record(self.ended, self.stream)? };
        Ok(())
    }

    /// Makes `stream` (a raw stream of this device) wait for the side
    /// stream's work up to its last end.
    pub fn join(&self, stream: u64) -> Result<()> {
        make_current(self.ctx)?;
        // SAFETY: as for `fork`.
        unsafe {
            result::stream::wait_event(
                stream as sys::CUstream,
                self.ended,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )?
        };
        Ok(())
    }
}

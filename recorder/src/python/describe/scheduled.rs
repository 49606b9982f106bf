//! A described launch as the hash scheduler sees it
//! (`crate::recording::hashes`, feature "cuda").

use super::{ArgUse, Described, TensorView, current_stream};
use crate::background::Fill;
use crate::python::alive::Alive;
use crate::recording::hashes::{LaunchHashes, Views, cuda::Cuda};
use pyo3::prelude::*;
use tritontui_trace::Span;

/// A described launch as the hash scheduler sees it
/// (`crate::recording::hashes`): its tensors are kept alive by new
/// references to them.
pub struct Scheduled<'a, 'py> {
    py: Python<'py>,
    described: &'a mut Described,
}

impl Described {
    /// This launch, for the hash scheduler.
    pub fn scheduled<'a, 'py>(&'a mut self, py: Python<'py>) -> Scheduled<'a, 'py> {
        Scheduled {
            py,
            described: self,
        }
    }

    /// The stream the launch runs on: the one it was described with, else
    /// the current stream of its first CUDA tensor's device (None without
    /// one, or when torch cannot say).
    pub fn launch_stream(&self, py: Python<'_>) -> Option<u64> {
        self.work.stream.or_else(|| {
            let device = self.device();
            (device >= 0).then(|| current_stream(py, device).ok())?
        })
    }

    /// The byte ranges of the device views `which` picks.
    pub fn device_spans(&self, which: Views) -> Vec<Span> {
        self.tensors
            .iter()
            .filter(move |view| {
                view.device >= 0
                    && match which {
                        Views::HashedBefore => view.hashed_before,
                        Views::HashedAfter => view.hashable && view.access != ArgUse::Allocated,
                        Views::Written => matches!(view.access, ArgUse::Out | ArgUse::InOut),
                    }
            })
            .map(TensorView::span)
            .collect()
    }
}

impl LaunchHashes<Cuda, Vec<Alive>> for Scheduled<'_, '_> {
    fn device(&self) -> i32 {
        self.described.device()
    }

    fn stream(&self) -> Option<u64> {
        self.described.launch_stream(self.py)
    }

    fn spans(&self, which: Views) -> Vec<Span> {
        self.described.device_spans(which)
    }

    fn has_device_work(&self) -> bool {
        self.described.work.batch.is_some() || self.described.work.error.is_some()
    }

    fn batch_mut(&mut self) -> Option<&mut crate::gpu::Batch> {
        let work = &mut self.described.work;
        if work.error.is_some() {
            return None;
        }
        work.batch.as_deref_mut()
    }

    fn take_batch(&mut self) -> Option<Box<crate::gpu::Batch>> {
        let work = &mut self.described.work;
        let batch = work.batch.take();
        if work.error.is_some() {
            return None;
        }
        batch
    }

    fn take_fills(&mut self) -> Vec<Fill> {
        std::mem::take(&mut self.described.fills)
    }

    fn keep_alive(&self) -> Vec<Alive> {
        self.described
            .tensors
            .iter()
            .map(|view| view.tensor.clone_ref(self.py))
            .collect()
    }

    fn device_failed(&mut self, error: String) {
        self.described.device_failed(error);
    }

    fn dispatch(&mut self) {
        self.described.dispatch();
    }
}

//! The scheduler's backend on the GPU: the device batches, tables and side
//! streams of `crate::gpu`.

use super::{
    Backend, CarriedHashes, GatheredHashes, GraphHashTable, HashBatch, SideStream, captured,
};
use crate::background::Pending;
use crate::gpu::{Batch, Beside, Carried, Gathered, GpuError, GraphTable};
use std::sync::Arc;

const _: () = assert!(captured::BESIDE < crate::gpu::FORKS);

/// Hashes on CUDA devices.
pub struct Cuda;

impl Backend for Cuda {
    type Error = GpuError;
    type Batch = Batch;
    type Gathered = Gathered;
    type Carried = Carried;
    type Table = Arc<GraphTable>;
    type Side = &'static Beside;

    fn side_of(ordinal: i32) -> Option<&'static Beside> {
        Beside::of(ordinal).ok()
    }

    fn capturing(stream: u64) -> bool {
        crate::gpu::stream_capturing(stream).unwrap_or(true)
    }
}

impl HashBatch<Cuda> for Batch {
    fn stream(&self) -> u64 {
        Batch::stream(self)
    }

    fn waiting_bytes(&self) -> u64 {
        Batch::waiting_bytes(self)
    }

    fn move_to(&mut self, stream: u64) -> bool {
        Batch::move_to(self, stream)
    }

    fn gathered(&self) -> Gathered {
        Gathered::for_stream_of(self)
    }

    fn hand_to(&mut self, gathered: &mut Gathered) -> bool {
        Batch::hand_to(self, gathered)
    }

    fn carry(&mut self) -> Option<Carried> {
        Batch::carry(self)
    }

    fn join(&mut self, carried: Carried) -> Result<(), Carried> {
        Batch::join(self, carried)
    }

    fn finish(self: Box<Self>) -> Result<Pending, GpuError> {
        let finished = Batch::finish(*self)?;
        Ok(Box::new(move || finished.wait().map_err(|e| e.to_string())))
    }
}

impl GatheredHashes<Cuda> for Gathered {
    fn len(&self) -> usize {
        Gathered::len(self)
    }

    fn enqueue(&mut self) -> Result<(), GpuError> {
        Gathered::enqueue(self)
    }
}

impl CarriedHashes<Cuda> for Carried {
    fn enqueue(self) -> Result<(), GpuError> {
        Carried::enqueue(self)
    }

    fn enqueue_beside(self, n: usize) -> Result<Result<(), GpuError>, GpuError> {
        Carried::enqueue_beside(self, n)
    }

    fn table(&self) -> Arc<GraphTable> {
        Arc::clone(Carried::table(self))
    }

    fn stream(&self) -> u64 {
        Carried::stream(self)
    }
}

impl GraphHashTable<Cuda> for Arc<GraphTable> {
    fn has_side(&self) -> bool {
        GraphTable::has_side(self)
    }

    fn origin(&self) -> u64 {
        GraphTable::origin(self)
    }

    fn join(&self, n: usize) -> Result<(), GpuError> {
        GraphTable::join(self, n)
    }
}

impl SideStream<Cuda> for &'static Beside {
    fn fork(self, origin: u64) -> Result<u64, GpuError> {
        Beside::fork(self, origin)
    }

    fn end(self) -> Result<(), GpuError> {
        Beside::end(self)
    }

    fn join(self, stream: u64) -> Result<(), GpuError> {
        Beside::join(self, stream)
    }
}

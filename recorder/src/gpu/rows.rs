//! Row hashes (`rows`) on the device: each index of a view's first
//! dimension hashed as the tensor it would be alone. Contiguous rows of
//! whole 16-byte chunks ride the batch's table (`hash_rows`): in the same
//! read as the view's own hash where that hash still waits in the table (a
//! launch's output), else as an item of their own, without a launch of
//! their own. Other views get a kernel of their own (`ttrows`).

use super::layout::{Dims, Layout, MAX_DIMS, Read, coalesce, reading};
use super::{Batch, Entry, Item, Result, TABLE_ITEMS, THREADS};
use std::ffi::c_void;

/// Bytes of a row one warp of `hash_rows` takes: a longer row is cut into
/// segments of about this many, added up as a table's blocks are.
const ROW_SEGMENT: u64 = 16 * 1024;

/// Warps in a block of the table kernel.
const WARPS: u64 = THREADS as u64 / 32;

impl Batch {
    /// Enqueues the hashes of a view's rows (the indices of its first
    /// dimension), each as the tensor it would be alone; returns the index
    /// in the batch of the first row's hash (the others follow it in
    /// order), or None when the batch has no slots left for them all, the
    /// view has too many dimensions, or the batch is captured into a CUDA
    /// graph.
    ///
    /// # Safety
    /// As for [`Batch::hash`].
    pub unsafe fn rows(
        &mut self,
        ptr: u64,
        itemsize: u64,
        shape: &[u64],
        stride: &[u64],
    ) -> Result<Option<usize>> {
        let (Some((&count, row_shape)), Some((&row_stride, row_strides))) =
            (shape.split_first(), stride.split_first())
        else {
            return Ok(None);
        };
        if self.graph.is_some() || count == 0 || count > u64::from(u32::MAX) {
            return Ok(None);
        }
        let row = coalesce(row_shape, row_strides);
        if row.0.len() > MAX_DIMS {
            return Ok(None);
        }
        let Some(slot) = self.take_slots(count as usize) else {
            return Ok(None);
        };
        let row_bytes = row_shape.iter().product::<u64>() * itemsize;
        let signed: Vec<i64> = stride.iter().map(|&s| s as i64).collect();
        let dense = tritontui_trace::format::LayoutDef::is_row_major(shape, &signed);
        if dense && ptr.is_multiple_of(16) && row_bytes > 0 && row_bytes.is_multiple_of(16) {
            self.rows_in_table(ptr, itemsize, count, row_bytes, slot)?;
        } else {
            let view = RowsView {
                ptr,
                itemsize,
                count,
                row_step: row_stride * itemsize,
                row_shape: &row.0,
                row_stride: &row.1,
            };
            // SAFETY: under this function's contract.
            unsafe { self.rows_kernel(view, slot)? };
        }
        let first = self.entries.len();
        self.entries
            .extend((0..count as usize).map(|row| Entry::Hash {
                slot: slot + row,
                len: row_bytes,
            }));
        Ok(Some(first))
    }

    /// Puts `count` contiguous rows of `row_bytes` at `ptr` in the table
    /// (`LAYOUT_ROWS`), their hashes in the slots from `slot` on: the
    /// view's own hash, if it waits there, becomes that item (one read for
    /// both).
    fn rows_in_table(
        &mut self,
        ptr: u64,
        itemsize: u64,
        count: u64,
        row_bytes: u64,
        slot: usize,
    ) -> Result<()> {
        let parts = row_bytes.div_ceil(ROW_SEGMENT).min(u64::from(u32::MAX));
        let blocks = self.blocks((count * parts).div_ceil(WARPS));
        let row_slot = u64::from(self.ring_slot(slot));
        let nbytes = count * row_bytes;
        let waiting = self.table.iter_mut().rev().find(|item| {
            item.data == ptr && item.layout == Layout::Contiguous && item.nbytes() == nbytes
        });
        if let Some(item) = waiting {
            item.layout = Layout::Rows;
            item.dims.shape[..4].copy_from_slice(&[row_bytes, row_slot, parts, 1]);
            item.blocks = blocks;
            return Ok(());
        }
        let mut dims = Dims {
            shape: [0; MAX_DIMS],
            stride: [0; MAX_DIMS],
            weight: [0; MAX_DIMS],
            divisor: [0; MAX_DIMS],
        };
        dims.shape[..4].copy_from_slice(&[row_bytes, row_slot, parts, 0]);
        self.table.push(Item {
            data: ptr,
            numel: nbytes / itemsize,
            element_stride: 0,
            itemsize: itemsize as u32,
            layout: Layout::Rows,
            read: Read::Words,
            ndim: 0,
            // The view's own hash is taken elsewhere: no slot of its own.
            slot: 0,
            first_block: 0,
            blocks,
            run: 1,
            dims,
        });
        if self.table.len() == TABLE_ITEMS && !self.held {
            self.dispatch()?;
        }
        Ok(())
    }

    /// Launches `ttrows` for the rows of `view`, their hashes
    /// in the slots from `slot` on: every row read as a table's item would
    /// read the first (the layout [`reading`] gives it, checked for the
    /// alignment of every row's start), shared by as many blocks as its
    /// size asks.
    ///
    /// # Safety
    /// As for [`Batch::hash`].
    unsafe fn rows_kernel(&mut self, view: RowsView<'_>, slot: usize) -> Result<()> {
        let RowsView {
            ptr,
            itemsize,
            count,
            mut row_step,
            row_shape,
            row_stride,
        } = view;
        // An address as aligned as the least aligned row start: its lowest
        // set bit is the lower of theirs.
        let probe = ptr | (row_step % 16);
        let reading = reading(probe, itemsize, row_shape, row_stride)?;
        let numel: u64 = row_shape.iter().product();
        let row_bytes = numel * itemsize;
        // Each block takes some 8 words a thread of its row, and a row at
        // most as many blocks as the device holds at once.
        let mut per_row = u32::try_from(
            row_bytes
                .div_ceil(8 * 8 * u64::from(THREADS))
                .clamp(1, u64::from(self.kernels.resident)),
        )
        .unwrap_or(1);
        // Its own slot unused: each row has one.
        let mut row = Item::read_as(&reading, ptr, numel, itemsize, 0, per_row);
        let (mut results, mut slot_param) = (self.ring, self.ring_slot(slot));
        let blocks = u32::try_from(count * u64::from(per_row)).unwrap_or(u32::MAX);
        let params = [
            &mut row as *mut Item as *mut c_void,
            &mut row_step as *mut u64 as *mut c_void,
            &mut results as *mut super::Results as *mut c_void,
            &mut slot_param as *mut u32 as *mut c_void,
            &mut per_row as *mut u32 as *mut c_void,
        ];
        // SAFETY: the parameters are `ttrows`'s, alive for the call.
        unsafe { self.launch(self.kernels.rows, blocks, params) }
    }
}

/// A view whose rows `ttrows` hashes: its address, element size, rows, the
/// bytes from one row's start to the next, and a row's shape and strides
/// (merged where they can be).
struct RowsView<'a> {
    ptr: u64,
    itemsize: u64,
    count: u64,
    row_step: u64,
    row_shape: &'a [u64],
    row_stride: &'a [u64],
}

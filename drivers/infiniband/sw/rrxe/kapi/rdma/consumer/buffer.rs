// SPDX-License-Identifier: GPL-2.0

//! Kernel buffers a device reaches by DMA, and the scatter/gather
//! elements ([`Sge`]) that name pieces of them in work requests.
//!
//! A [`DmaBuf`] is physically contiguous kernel memory (kmalloc, in the
//! direct map).  Its DMA address is its kernel virtual address: this
//! layer serves devices without a DMA device (`ib_uses_virt_dma`, the
//! soft RoCE drivers rrxe and rxe) and refuses others with `EOPNOTSUPP`
//! rather than handing them an address they cannot use.
//!
//! The device writes a buffer at any time while work naming it is
//! outstanding, so the buffer is never lent out as a Rust reference to
//! its bytes: the consumer reads and writes it by copy.

use core::{marker::PhantomData, ptr::NonNull};
use kernel::{bindings, prelude::*};

use super::super::client::IbDevice;
use super::pd::Pd;

/// `EOPNOTSUPP` unless `dev` does DMA by kernel virtual address
/// (`ib_uses_virt_dma`: no DMA device), the only kind this layer serves.
///
/// `dev` must be a registered device (its `dma_device` is set before
/// registration and not changed after).
pub(super) fn require_virt_dma(dev: *mut bindings::ib_device) -> Result {
    // SAFETY: Callers pass a registered device: the device a consumer was
    // handed, or the one a live PD or region of it points to.
    if unsafe { (*dev).dma_device }.is_null() {
        Ok(())
    } else {
        Err(crate::kapi::eopnotsupp())
    }
}

/// Contiguous kernel memory a virt-DMA device reads and writes.
///
/// # Invariants
///
/// `ptr` is the start of a kmalloc'd allocation of `len` (non-zero) bytes
/// (a `KVec<u8>` of capacity `len`, taken apart), owned by `self` and
/// freed only by its drop.  It is in the direct map, so its kernel virtual
/// address is its DMA address for a virt-DMA device.
pub(crate) struct DmaBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: The buffer is plain memory owned by `self` (type invariant);
// every access is a copy through a raw pointer, which any thread may make.
unsafe impl Send for DmaBuf {}
// SAFETY: Shared references only allow copies in and out (the device may
// write concurrently anyway); no reference to the bytes is handed out.
unsafe impl Sync for DmaBuf {}

impl DmaBuf {
    /// Allocates `len` zeroed bytes for `dev`; `EOPNOTSUPP` if the device
    /// does DMA through a DMA device (its addresses are not virtual).
    pub(crate) fn new(dev: &IbDevice, len: usize) -> Result<Self> {
        require_virt_dma(dev.raw())?;
        if len == 0 {
            return Err(EINVAL);
        }
        let v = KVec::from_elem(0u8, len, GFP_KERNEL)?;
        let (ptr, len, _cap) = v.into_raw_parts();
        // INVARIANT: `from_elem` allocated exactly `len` bytes (capacity
        // `len`), now owned by the returned value.
        Ok(Self {
            ptr: NonNull::new(ptr).ok_or(ENOMEM)?,
            len,
        })
    }

    /// The buffer's size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The DMA (here: kernel virtual) address of byte `off`.
    pub(crate) fn dma_addr(&self, off: usize) -> u64 {
        self.ptr.as_ptr() as u64 + off as u64
    }

    pub(super) fn as_ptr(&self, off: usize) -> *const u8 {
        self.ptr.as_ptr().wrapping_add(off)
    }

    /// `EINVAL` unless `[off, off + n)` lies inside the buffer.
    pub(super) fn check(&self, off: usize, n: usize) -> Result {
        match off.checked_add(n) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(EINVAL),
        }
    }

    /// Copies `src` into the buffer at `off`.
    pub(crate) fn write(&self, off: usize, src: &[u8]) -> Result {
        self.check(off, src.len())?;
        // SAFETY: `off <= len` (checked above): inside, or one past the
        // end of, the allocation of `len` bytes (type invariant).
        let dst = unsafe { self.ptr.as_ptr().add(off) };
        // SAFETY: `[off, off + src.len())` is inside the allocation (checked
        // above, type invariant); `src` is a distinct Rust slice.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
        Ok(())
    }

    /// Copies the bytes at `off` into `dst`.  Bytes the device is writing
    /// at the same time read as some mix of old and new.
    pub(crate) fn read(&self, off: usize, dst: &mut [u8]) -> Result {
        self.check(off, dst.len())?;
        // SAFETY: `off <= len` (checked above): inside, or one past the
        // end of, the allocation of `len` bytes (type invariant).
        let src = unsafe { self.ptr.as_ptr().add(off) };
        // SAFETY: `[off, off + dst.len())` is inside the allocation (checked
        // above, type invariant); `dst` is a distinct Rust slice.
        unsafe { core::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    /// An element naming `[off, off + len)` with `pd`'s local DMA key,
    /// for work posted on a QP of that PD.
    pub(crate) fn sge(&self, pd: &Pd<'_>, off: usize, len: u32) -> Result<Sge<'_>> {
        self.check(off, len as usize)?;
        Ok(Sge {
            sge: bindings::ib_sge {
                addr: self.dma_addr(off),
                length: len,
                lkey: pd.local_dma_lkey(),
            },
            _buf: PhantomData,
        })
    }
}

impl Drop for DmaBuf {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `ptr` and `len` are the parts of a
        // `KVec<u8>` of capacity `len`, reassembled once, here; no work
        // names the buffer any more (what used it borrowed `self`).
        drop(unsafe { KVec::from_raw_parts(self.ptr.as_ptr(), self.len, self.len) });
    }
}

/// A piece of a [`DmaBuf`] with its local key; borrows the buffer, so the
/// buffer outlives every QP the element is posted on.
#[derive(Clone, Copy)]
pub(crate) struct Sge<'b> {
    sge: bindings::ib_sge,
    _buf: PhantomData<&'b DmaBuf>,
}

impl Sge<'_> {
    pub(super) fn raw(&self) -> bindings::ib_sge {
        self.sge
    }

    /// The element's length in bytes.
    pub(crate) fn len(&self) -> u32 {
        self.sge.length
    }
}

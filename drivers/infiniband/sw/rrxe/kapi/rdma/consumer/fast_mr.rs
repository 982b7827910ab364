// SPDX-License-Identifier: GPL-2.0

//! Fast-registration regions as a kernel consumer uses them (the
//! memory-management extensions NVMe over RDMA is built on):
//! [`FastRegMr::alloc`] makes a region with room for some pages and no
//! registration (`ib_alloc_mr`, `IB_MR_TYPE_MEM_REG`),
//! [`FastRegMr::map`] lists the pages of a piece of a [`DmaBuf`] into it
//! (`ib_map_mr_sg`), an `IB_WR_REG_MR` work request
//! ([`super::qp::SendOp::RegMr`]) makes that list the region's
//! registration with the rights it names, and a local invalidate (or a
//! peer's SEND with Invalidate) ends it: the key is then refused.
//!
//! A registration work request borrows the region for the QP's lifetime
//! (the device may read the region's page list after the post returns),
//! so a region is mapped once and registered by reference after that.

use core::{marker::PhantomData, ptr::NonNull};
use kernel::{bindings, error::from_err_ptr, prelude::*};

use super::buffer::{require_virt_dma, DmaBuf};
use super::pd::Pd;

/// A fast-registration region of a PD; it may map pieces of buffers that
/// outlive it (`'a`).  Deregistered on drop, which ends every access
/// through its keys.
///
/// # Invariants
///
/// `mr` is an `IB_MR_TYPE_MEM_REG` region made by `ib_alloc_mr` on a PD
/// borrowed for `'a`, owned by `self` and deregistered only by its drop;
/// every buffer it maps outlives `'a`.
pub(crate) struct FastRegMr<'a> {
    mr: NonNull<bindings::ib_mr>,
    _life: PhantomData<(&'a Pd<'a>, &'a DmaBuf)>,
}

impl<'a> FastRegMr<'a> {
    /// A region of `pd` for up to `max_pages` pages.  May sleep.
    pub(crate) fn alloc(pd: &'a Pd<'_>, max_pages: u32) -> Result<Self> {
        // SAFETY: `pd` is a live PD for `'a`; a MEM_REG region takes a
        // page count.
        let mr = unsafe {
            bindings::ib_alloc_mr(pd.raw(), bindings::ib_mr_type_IB_MR_TYPE_MEM_REG, max_pages)
        };
        let mr = NonNull::new(from_err_ptr(mr)?).ok_or(ENOMEM)?;
        // INVARIANT: The region just made on `pd` (borrowed for `'a`), owned
        // by the returned value; it maps nothing yet.
        Ok(Self {
            mr,
            _life: PhantomData,
        })
    }

    /// Lists the pages of `buf[off .. off + len)` into the region (the
    /// region's address becomes `buf.dma_addr(off)`); the list takes
    /// effect with the next `IB_WR_REG_MR`.  `EINVAL` if the piece is
    /// empty, out of the buffer or does not fit the region; `EOPNOTSUPP`
    /// if the region's device is not a virt-DMA one.
    pub(crate) fn map(&mut self, buf: &'a DmaBuf, off: usize, len: u32) -> Result {
        if len == 0 {
            return Err(EINVAL);
        }
        buf.check(off, len as usize)?;
        // SAFETY: `self.mr` is a live region (type invariant); its device
        // is set at allocation.
        let dev = unsafe { (*self.mr.as_ptr()).device };
        require_virt_dma(dev)?;
        let mut sg = bindings::scatterlist::default();
        // SAFETY: `sg` is a scatterlist entry on this stack frame; the
        // piece is inside `buf`'s allocation (checked above), which is in
        // the direct map.
        unsafe { bindings::sg_init_one(&mut sg, buf.as_ptr(off).cast(), len) };
        // SAFETY: `dev` is the region's registered device, a virt-DMA one
        // (checked above): this sets the entry's DMA address to its
        // virtual address, as `ib_dma_map_sg` does there.
        let n = unsafe { bindings::ib_dma_virt_map_sg(dev, &mut sg, 1) };
        if n != 1 {
            return Err(EINVAL);
        }
        let page = 1u32 << bindings::PAGE_SHIFT;
        // INVARIANT: `buf` is borrowed for `'a`, so it outlives `'a`.
        // SAFETY: `self.mr` is a live MEM_REG region (type invariant); `sg`
        // is one mapped entry, read only during the call.
        let mapped = unsafe {
            bindings::ib_map_mr_sg(self.mr.as_ptr(), &mut sg, 1, core::ptr::null_mut(), page)
        };
        if mapped != 1 {
            return Err(if mapped < 0 {
                Error::from_errno(mapped)
            } else {
                EINVAL
            });
        }
        Ok(())
    }

    /// The key a peer names the region by.
    pub(crate) fn rkey(&self) -> u32 {
        // SAFETY: `self.mr` is a live region (type invariant); keys change
        // only through `&mut self`.
        unsafe { (*self.mr.as_ptr()).rkey }
    }

    /// The region's address: the DMA address of the mapped piece.
    pub(crate) fn iova(&self) -> u64 {
        // SAFETY: `self.mr` is a live region (type invariant); `map`
        // (exclusive borrow) sets the address.
        unsafe { (*self.mr.as_ptr()).iova }
    }

    pub(super) fn raw(&self) -> *mut bindings::ib_mr {
        self.mr.as_ptr()
    }
}

impl Drop for FastRegMr<'_> {
    fn drop(&mut self) {
        // SAFETY: `self.mr` was allocated by `ib_alloc_mr` and is ours
        // (type invariant), deregistered once, here; a kernel region has no
        // user data.
        unsafe { bindings::ib_dereg_mr_user(self.mr.as_ptr(), core::ptr::null_mut()) };
    }
}

// SPDX-License-Identifier: GPL-2.0

//! Fast-registration memory regions (IBTA's memory management extensions,
//! for kernel consumers such as NVMe over RDMA): `alloc_mr`
//! (`IB_MR_TYPE_MEM_REG`) makes a region with room for `max_num_sg`
//! blocks and no registration; `map_mr_sg` lists the blocks of a
//! scatterlist into it (ib_core's `ib_sg_to_pages` cuts the list into
//! blocks of the consumer's page size); an `IB_WR_REG_MR` work request
//! makes that list the region's registration, with a new key and rights;
//! a local invalidate, or a SEND with Invalidate from the peer, ends it.
//!
//! rrxe has no DMA device (`ib_uses_virt_dma`): a block's address is the
//! kernel virtual address of the consumer's memory, checked against the
//! direct map when it is listed.
//!
//! [`FastPages`] keeps the staged list (what `map_mr_sg` wrote), the
//! active one (the registration's) and the registration's generation
//! under one interrupt-safe lock.  Every engine access to a registration
//! runs under that lock and first checks that the registration it was
//! resolved against is still the current one.  So an invalidation, which
//! takes the lock, waits for a copy in progress and no copy starts after
//! it: once the consumer sees the invalidation complete, rrxe never
//! touches the old pages again (C rxe only flips a state word).

use kernel::{bindings, ffi::c_int, prelude::*, sync::Arc};

use super::device::Driver;
use crate::kapi::spinlock_irq::SpinLockIrq;
use crate::new_spinlock_irq;

/// The blocks of a mapping: the region `[0, len)` starts `first_offset`
/// bytes into block 0; each block is `1 << shift` bytes of the direct map.
struct BlockList {
    addrs: KVVec<u64>,
    shift: u32,
    first_offset: u64,
    iova: u64,
    len: u64,
}

impl BlockList {
    fn with_capacity(n: usize) -> Result<Self> {
        Ok(Self {
            addrs: KVVec::with_capacity(n, GFP_KERNEL)?,
            shift: bindings::PAGE_SHIFT,
            first_offset: 0,
            iova: 0,
            len: 0,
        })
    }

    /// Runs `f(address, done, n)` on each piece of `[off, off + n)`,
    /// block by block; `EFAULT` if the range is outside the mapping.
    fn for_each_piece(&self, off: u64, n: u64, mut f: impl FnMut(u64, usize, usize)) -> Result {
        let end = off.checked_add(n).ok_or(EFAULT)?;
        if end > self.len {
            return Err(EFAULT);
        }
        let bsize = 1u64 << self.shift;
        let mut done = 0u64;
        while done < n {
            let abs = self.first_offset + off + done;
            let (blk, in_blk) = (abs >> self.shift, abs & (bsize - 1));
            let base = *self.addrs.get(blk as usize).ok_or(EFAULT)?;
            let len = (bsize - in_blk).min(n - done);
            f(base + in_blk, done as usize, len as usize);
            done += len;
        }
        Ok(())
    }
}

/// The lock-protected part of [`FastPages`].
struct FastInner {
    staged: BlockList,
    active: BlockList,
    /// Bumped by every registration and invalidation.
    gen: u64,
    /// A registration is current (the region is Valid, not Free).
    valid: bool,
}

/// Why a fast-registration operation was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FastRegError {
    /// REG_MR of a region that is registered already (IBTA: it must be
    /// Free).
    NotFree,
    /// REG_MR without a `map_mr_sg` since the region was allocated.
    NotMapped,
}

/// The block lists and registration state of one fast-registration
/// region.
#[pin_data]
pub(crate) struct FastPages {
    #[pin]
    inner: SpinLockIrq<FastInner>,
    max_blocks: usize,
}

/// A registration the driver made current: its generation, address and
/// length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Registered {
    pub(crate) gen: u64,
    pub(crate) iova: u64,
    pub(crate) len: u64,
}

impl FastPages {
    /// A region with room for `max_blocks` blocks, Free.  May sleep.
    pub(crate) fn new(max_blocks: usize) -> Result<Arc<Self>> {
        let inner = FastInner {
            staged: BlockList::with_capacity(max_blocks)?,
            active: BlockList::with_capacity(max_blocks)?,
            gen: 0,
            valid: false,
        };
        Arc::pin_init(
            pin_init!(Self {
                inner <- new_spinlock_irq!(inner),
                max_blocks,
            }),
            GFP_KERNEL,
        )
    }

    /// Starts a new staged list (`map_mr_sg`).
    fn stage_begin(&self) {
        let mut g = self.inner.lock();
        g.staged.addrs.clear();
        g.staged.len = 0;
    }

    /// Appends block `addr` of `1 << shift` bytes to the staged list;
    /// `ENOMEM` when full, `EINVAL` for a block outside the direct map.
    fn stage_block(&self, addr: u64, shift: u32) -> Result {
        super::wr::check_direct_map(addr, 1usize << shift)?;
        let mut g = self.inner.lock();
        if g.staged.addrs.len() >= self.max_blocks {
            return Err(ENOMEM);
        }
        g.staged.shift = shift;
        // Within the capacity reserved at creation: no allocation.
        g.staged.addrs.push(addr, GFP_ATOMIC)?;
        Ok(())
    }

    /// Ends the staged list: the region is `[iova, iova + len)`, starting
    /// `iova`'s offset into the first block.
    fn stage_end(&self, iova: u64, len: u64) -> Result {
        let mut g = self.inner.lock();
        let bsize = 1u64 << g.staged.shift;
        let first_offset = iova & (bsize - 1);
        let room = (g.staged.addrs.len() as u64) << g.staged.shift;
        if first_offset.checked_add(len).is_none_or(|e| e > room) {
            g.staged.addrs.clear();
            return Err(EINVAL);
        }
        g.staged.first_offset = first_offset;
        g.staged.iova = iova;
        g.staged.len = len;
        Ok(())
    }

    /// Sets the staged mapping's address as the consumer's `ib_mr` says
    /// when it posts the registration (it may rebase `iova` after
    /// `map_mr_sg`).  Any context.
    pub(crate) fn stage_iova(&self, iova: u64) {
        self.inner.lock().staged.iova = iova;
    }

    /// REG_MR: the staged mapping becomes the current registration.  Any
    /// context; does not allocate.
    pub(crate) fn register(&self) -> core::result::Result<Registered, FastRegError> {
        let mut g = self.inner.lock();
        if g.valid {
            return Err(FastRegError::NotFree);
        }
        if g.staged.addrs.is_empty() {
            return Err(FastRegError::NotMapped);
        }
        let g = &mut *g;
        g.active.addrs.clear();
        // Within the capacity reserved at creation (both lists have
        // `max_blocks`): no allocation.
        if g.active
            .addrs
            .extend_from_slice(&g.staged.addrs, GFP_ATOMIC)
            .is_err()
        {
            return Err(FastRegError::NotMapped);
        }
        g.active.shift = g.staged.shift;
        g.active.first_offset = g.staged.first_offset;
        g.active.iova = g.staged.iova;
        g.active.len = g.staged.len;
        g.gen = g.gen.wrapping_add(1);
        g.valid = true;
        Ok(Registered {
            gen: g.gen,
            iova: g.active.iova,
            len: g.active.len,
        })
    }

    /// Ends the current registration (local invalidate, SEND with
    /// Invalidate, deregistration).  Waits for a copy in progress under
    /// the lock; none starts after.  Any context.
    pub(crate) fn invalidate(&self) {
        let mut g = self.inner.lock();
        g.valid = false;
        g.gen = g.gen.wrapping_add(1);
    }

    /// Whether registration `gen` is the current one.
    pub(crate) fn is_current(&self, gen: u64) -> bool {
        let g = self.inner.lock();
        g.valid && g.gen == gen
    }

    /// Runs `f(address, done, n)` on each piece of `[off, off + n)` of
    /// registration `gen`, under the lock; `EFAULT` if it is no longer
    /// current or the range is outside it.  `f` must not sleep.
    pub(super) fn for_each_piece(
        &self,
        gen: u64,
        off: u64,
        n: u64,
        f: impl FnMut(u64, usize, usize),
    ) -> Result {
        let g = self.inner.lock();
        if !g.valid || g.gen != gen {
            return Err(EFAULT);
        }
        g.active.for_each_piece(off, n, f)
    }
}

/// `ib_sg_to_pages`'s callback: lists one block of `mr`.
///
/// # Safety
///
/// Called by `ib_sg_to_pages` from [`map_mr_sg`] for an MR of driver `T`
/// that `alloc_mr` made.
unsafe extern "C" fn set_page<T: Driver>(mr: *mut bindings::ib_mr, addr: u64) -> c_int {
    // SAFETY: Per the function's contract, a live fast-registration MR.
    let Some(pages) = (unsafe { super::mr::fast_pages::<T>(mr) }) else {
        return -(bindings::EINVAL as c_int);
    };
    // SAFETY: `mr` is live; ib_core set `page_size` (a power of two) before
    // calling `map_mr_sg`.
    let shift = unsafe { (*mr).page_size }.trailing_zeros();
    match pages.stage_block(addr, shift) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `map_mr_sg`: lists the blocks of `sg` (from `*sg_offset` into its first
/// entry) in the region; returns how many entries were mapped.
///
/// # Safety
///
/// Only called by ib_core (`ib_map_mr_sg`) for a live MR of driver `T`,
/// with a valid DMA-mapped scatterlist of `sg_nents` entries and a null or
/// valid offset.
pub(super) unsafe extern "C" fn map_mr_sg<T: Driver>(
    mr: *mut bindings::ib_mr,
    sg: *mut bindings::scatterlist,
    sg_nents: c_int,
    sg_offset: *mut u32,
) -> c_int {
    // SAFETY: Per the function's contract.
    let Some(pages) = (unsafe { super::mr::fast_pages::<T>(mr) }) else {
        return -(bindings::EINVAL as c_int);
    };
    // SAFETY: `mr` is live; `page_size` was set by `ib_map_mr_sg`.
    let page_size = unsafe { (*mr).page_size };
    if !page_size.is_power_of_two() || page_size < 4096 {
        return -(bindings::EINVAL as c_int);
    }
    pages.stage_begin();
    // SAFETY: ib_core's contract for the list; `set_page::<T>` matches the
    // MR's driver.  `ib_sg_to_pages` sets the MR's `iova` and `length`.
    let n = unsafe { bindings::ib_sg_to_pages(mr, sg, sg_nents, sg_offset, Some(set_page::<T>)) };
    if n <= 0 {
        return n;
    }
    // SAFETY: `mr` is live; plain fields `ib_sg_to_pages` just wrote.
    let (iova, len) = unsafe { ((*mr).iova, (*mr).length) };
    match pages.stage_end(iova, len) {
        Ok(()) => n,
        Err(e) => e.to_errno(),
    }
}

// rrxe runs these; the samples that compile kapi too (samples/rust,
// built with --cfg rrxe_sample) do not register them a second time.
#[cfg(not(rrxe_sample))]
#[kernel::macros::kunit_tests(rrxe_fast_reg)]
mod tests {
    use super::*;

    const PAGE: u64 = 4096;

    /// A kmalloc'd (direct-mapped) buffer and its first page-aligned
    /// address, with `pages` pages from there.
    fn buffer(pages: usize) -> Result<(KVec<u8>, u64)> {
        let b = KVec::<u8>::with_capacity((pages + 1) * PAGE as usize, GFP_KERNEL)?;
        let base = (b.as_ptr() as u64).next_multiple_of(PAGE);
        Ok((b, base))
    }

    /// The pieces `[off, off + n)` of registration `gen` is made of.
    fn pieces(p: &FastPages, gen: u64, off: u64, n: u64) -> Result<KVec<(u64, usize, usize)>> {
        let mut v = KVec::new();
        let mut res = Ok(());
        p.for_each_piece(gen, off, n, |a, done, len| {
            if res.is_ok() {
                res = v.push((a, done, len), GFP_ATOMIC).map_err(|_| ENOMEM);
            }
        })?;
        res.map(|()| v)
    }

    #[test]
    fn blocks_split_at_the_consumers_page_size() -> Result {
        let (_buf, base) = buffer(4)?;
        let p = FastPages::new(4)?;
        // Two 4 KiB blocks that are not adjacent; the region starts 100
        // bytes into the first and ends 50 bytes into the second.
        p.stage_begin();
        p.stage_block(base, 12)?;
        p.stage_block(base + 2 * PAGE, 12)?;
        p.stage_end(base + 100, PAGE - 100 + 50)?;
        let r = p.register().map_err(|_| EINVAL)?;
        assert_eq!((r.iova, r.len), (base + 100, PAGE - 50));
        let v = pieces(&p, r.gen, 0, r.len)?;
        assert_eq!(
            &v[..],
            &[(base + 100, 0, 3996), (base + 2 * PAGE, 3996, 50)]
        );
        // One 8 KiB block: an offset past 4 KiB stays in it.
        p.invalidate();
        p.stage_begin();
        p.stage_block(base, 13)?;
        p.stage_end(base + 8, 2 * PAGE - 8)?;
        let r = p.register().map_err(|_| EINVAL)?;
        let v = pieces(&p, r.gen, 5000, 200)?;
        assert_eq!(&v[..], &[(base + 8 + 5000, 0, 200)]);
        Ok(())
    }

    #[test]
    fn a_registration_ends_with_its_invalidation() -> Result {
        let (_buf, base) = buffer(1)?;
        let p = FastPages::new(1)?;
        assert_eq!(p.register(), Err(FastRegError::NotMapped));
        p.stage_begin();
        p.stage_block(base, 12)?;
        p.stage_end(base, PAGE)?;
        let r1 = p.register().map_err(|_| EINVAL)?;
        assert!(p.is_current(r1.gen));
        // Registered already: IBTA wants a Free region.
        assert_eq!(p.register(), Err(FastRegError::NotFree));
        p.invalidate();
        assert!(!p.is_current(r1.gen));
        assert_eq!(pieces(&p, r1.gen, 0, 8).err(), Some(EFAULT));
        // The same mapping registered again is a new registration; the
        // old one stays dead.
        let r2 = p.register().map_err(|_| EINVAL)?;
        assert_ne!(r1.gen, r2.gen);
        assert!(p.is_current(r2.gen) && !p.is_current(r1.gen));
        assert_eq!(pieces(&p, r1.gen, 0, 8).err(), Some(EFAULT));
        assert_eq!(pieces(&p, r2.gen, 0, 8)?.len(), 1);
        Ok(())
    }

    #[test]
    fn what_does_not_fit_is_refused() -> Result {
        let (_buf, base) = buffer(2)?;
        let p = FastPages::new(1)?;
        p.stage_begin();
        p.stage_block(base, 12)?;
        // Beyond `max_num_sg` blocks.
        assert_eq!(p.stage_block(base + PAGE, 12), Err(ENOMEM));
        // A length beyond the blocks listed.
        assert_eq!(p.stage_end(base + 1, PAGE), Err(EINVAL));
        // Not in the direct map.
        assert_eq!(p.stage_block(0x1000, 12), Err(EINVAL));
        p.stage_begin();
        p.stage_block(base, 12)?;
        p.stage_end(base, 100)?;
        let r = p.register().map_err(|_| EINVAL)?;
        // Outside the region.
        assert_eq!(pieces(&p, r.gen, 50, 51).err(), Some(EFAULT));
        assert_eq!(pieces(&p, r.gen, u64::MAX, 2).err(), Some(EFAULT));
        Ok(())
    }
}

// SPDX-License-Identifier: GPL-2.0

//! On-demand paging (ODP) memory: a region of a process's memory that is
//! not pinned (`IB_ACCESS_ON_DEMAND`).  ib_core's `ib_umem_odp` keeps a
//! table of the pages that are present (an hmm pfn entry per page, filled
//! by `hmm_range_fault`) and an `mmu_interval_notifier` over the range; the
//! kernel calls the notifier's invalidate callback before it changes a
//! mapping in the range (munmap, `MADV_DONTNEED`, migration, swap, the
//! write protection of fork and of writeback), and the callback clears the
//! entries.
//!
//! [`OdpUmem`] gives the engine the same four operations as pinned memory
//! (`copy.rs`), each over a range the caller has already checked against
//! the region's rights:
//!
//! 1. its lock (a [`Mutex`]) is taken: it keeps the `ib_umem_odp` alive
//!    ([`OdpUmem::release`] takes the umem out under it, so release waits
//!    for an access in progress and no access starts after it);
//! 2. the umem's `umem_mutex` is taken and every page of the range is
//!    checked present (`HMM_PFN_VALID`, and `HMM_PFN_WRITE` for a store);
//! 3. if one is not, the mutex is dropped and the range faulted in with
//!    `ib_umem_odp_map_dma_and_lock` (which may sleep; it retries while an
//!    invalidation races with it and returns with `umem_mutex` held once
//!    its view of the pages is current), and the check repeated;
//! 4. the copy runs page by page on the entries' pages, then `umem_mutex`
//!    is dropped.
//!
//! **Serialisation with invalidation.**  A page is dereferenced only with
//! `umem_mutex` held, after this same holder saw its entry valid (and
//! writable, for a store).  The invalidate callback takes `umem_mutex`
//! before it clears the entries and returns only after dropping it, and
//! the kernel changes the mapping only after the callback returned: so a
//! copy in progress finishes before the page can go, and none starts on
//! it afterwards without faulting it in again.  An invalidation that may
//! not block (`mmu_notifier_range_blockable` false) is refused (the kernel
//! then retries with one that may), as C rxe does.  Under `umem_mutex`
//! nothing allocates, faults or takes another region's mutex (reclaim may
//! invalidate, which takes it): the copies of `copy.rs` only move bytes.
//!
//! Entries are read with volatile loads: `hmm_range_fault` fills them
//! without `umem_mutex`; an entry seen valid under the mutex stays valid
//! until the mutex is dropped (clearing it needs the mutex).
//!
//! A fault that cannot be resolved (the range unmapped, a store to memory
//! the process may not write, the process gone, or an invalidation storm
//! past ib_core's one-second budget) is an error of the operation
//! ([`OdpError::Fault`]), never an oops.

use core::{marker::PhantomData, ptr::NonNull};
use kernel::{
    bindings,
    error::from_err_ptr,
    ffi::{c_int, c_ulong},
    new_mutex,
    prelude::*,
    sync::Mutex,
};

use super::copy::{self, Atomic64Op, Pieces};
use crate::kapi::net::{route::TxPacket, skb::SkBuff};
use crate::kapi::rdma::access::{HUGETLB, ON_DEMAND};
use crate::kapi::rdma::device::{Device, Driver};

const PAGE_SHIFT: u32 = bindings::PAGE_SHIFT;
const PAGE_SIZE: usize = 1 << PAGE_SHIFT;
/// `HMM_PFN_VALID`: the entry names a present page.
const PFN_VALID: c_ulong = bindings::hmm_pfn_flags_HMM_PFN_VALID as c_ulong;
/// `HMM_PFN_WRITE`: the process may write the page (its PTE is writable).
const PFN_WRITE: c_ulong = bindings::hmm_pfn_flags_HMM_PFN_WRITE as c_ulong;

/// Why an access to on-demand-paging memory failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OdpError {
    /// The region was deregistered ([`OdpUmem::release`]).
    Released,
    /// The range is not inside the region.
    Range,
    /// An atomic's target is not 8-byte aligned in memory.
    Misaligned,
    /// The pages could not be faulted in (`EFAULT` unmapped, `EPERM` not
    /// writable, `EBUSY` invalidated for too long, `EINVAL` the process
    /// gone, `ENOMEM`).
    Fault(Error),
}

/// How [`OdpUmem::prefetch`] brings pages in (`ibv_advise_mr` advice).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Prefetch {
    /// Fault the pages in for reading.
    Read,
    /// Fault the pages in for writing.
    Write,
    /// Only record the pages already present; fault nothing.
    NoFault,
}

/// The `ib_umem_odp` an [`OdpUmem`] owns.
///
/// # Invariants
///
/// `self.0` is a live `ib_umem_odp` made by `ib_umem_odp_get` with
/// [`MN_OPS`], owned by the holder of the `Umem`; it is released
/// (`ib_umem_odp_release`) once, by whoever owns it last: [`OdpUmem::new`]
/// on its failure paths, or [`OdpUmem::release`] after taking it out.
struct Umem(NonNull<bindings::ib_umem_odp>);

// SAFETY: An `ib_umem_odp` (owned, type invariant) may be used and released
// from any thread; its mutable state is behind its own `umem_mutex`.
unsafe impl Send for Umem {}

/// On-demand-paging memory of a region (module docs).
///
/// # Invariants
///
/// `umem` holds `Some` until [`OdpUmem::release`] takes it out (under the
/// lock) and releases it; it never becomes `Some` again.  Every access to
/// the umem holds the lock throughout, so a `Some` umem read under the lock
/// stays live until the lock is dropped.  The umem covers `len` bytes from
/// user address `addr`.
#[pin_data(PinnedDrop)]
pub(crate) struct OdpUmem {
    /// The umem, until [`OdpUmem::release`] takes it; held across each
    /// access.
    #[pin]
    umem: Mutex<Option<Umem>>,
    /// The region's first user address and length in bytes.
    addr: u64,
    len: usize,
    /// Whether the region was registered writable (`ib_access_writable`):
    /// only then may stores fault pages in for writing.
    writable: bool,
}

/// The notifier operations of every rrxe ODP umem.
static MN_OPS: bindings::mmu_interval_notifier_ops = bindings::mmu_interval_notifier_ops {
    invalidate: Some(invalidate),
    invalidate_start: None,
    invalidate_finish: None,
};

/// The invalidate callback: clears the entries of the part of the range
/// in the umem, under `umem_mutex` (module docs).
///
/// # Safety
///
/// Called by the mm core with the notifier of a live `ib_umem_odp` (it is
/// removed, waiting for running callbacks, before the umem is freed) and
/// a valid range.
unsafe extern "C" fn invalidate(
    mni: *mut bindings::mmu_interval_notifier,
    range: *const bindings::mmu_notifier_range,
    cur_seq: c_ulong,
) -> bool {
    // SAFETY: `range` is valid for the call (the function's contract).
    if !unsafe { bindings::mmu_notifier_range_blockable(range) } {
        return false;
    }
    // SAFETY: `mni` is the `notifier` field of a live `ib_umem_odp` (the
    // only notifiers with these operations are those `OdpUmem::new` made).
    let umem = unsafe { kernel::container_of!(mni, bindings::ib_umem_odp, notifier) };
    // SAFETY: The umem is live (the function's contract); its mutex was
    // initialised by `ib_umem_odp_get`.
    unsafe { bindings::mutex_lock(&raw mut (*umem).umem_mutex) };
    // SAFETY: `mni` is live and the sequence is saved under the same lock
    // the fault path checks it under, as `mmu_interval_set_seq` requires.
    unsafe { bindings::mmu_interval_set_seq(mni, cur_seq) };
    // SAFETY: The umem is live; this reads the start of its immutable interval.
    let lo = unsafe { bindings::ib_umem_start(umem) };
    // SAFETY: The umem is live; this reads the end of its immutable interval.
    let hi = unsafe { bindings::ib_umem_end(umem) };
    // SAFETY: `range` is valid for the call (the function's contract).
    let range = unsafe { &*range };
    let (start, end) = (range.start.max(lo), range.end.min(hi));
    if start < end {
        // SAFETY: `umem_mutex` is held, as the function requires; the
        // bounds are inside the umem.
        unsafe { bindings::ib_umem_odp_unmap_dma_pages(umem, start as u64, end as u64) };
    }
    // SAFETY: Locked above by this thread.
    unsafe { bindings::mutex_unlock(&raw mut (*umem).umem_mutex) };
    true
}

impl OdpUmem {
    /// Registers `len` bytes of the calling process's memory at `addr` for
    /// on-demand paging with `IB_ACCESS_*` flags `access` (which include
    /// [`ON_DEMAND`]); nothing is pinned or faulted in, the pages already
    /// present are recorded.  `EINVAL` for an implicit region (address 0,
    /// length `u64::MAX`), `EOPNOTSUPP` for huge pages.  May sleep.
    pub(crate) fn new<T: Driver>(
        dev: &Device<T>,
        addr: u64,
        len: u64,
        access: u32,
    ) -> Result<Pin<KBox<Self>>> {
        if access & ON_DEMAND == 0 || (addr == 0 && len == u64::MAX) {
            return Err(EINVAL);
        }
        if access & HUGETLB != 0 {
            return Err(crate::kapi::eopnotsupp());
        }
        let size = usize::try_from(len)?;
        let start = c_ulong::try_from(addr)?;
        // SAFETY: Called in the context of the process whose memory is
        // registered (a uverbs command; ib_umem_odp_get records its mm);
        // `MN_OPS` is static.
        let raw = from_err_ptr(unsafe {
            bindings::ib_umem_odp_get(dev.as_raw(), start, size, access as c_int, &MN_OPS)
        })?;
        // INVARIANT: The umem just made, with `MN_OPS`; owned here, and
        // released on each failure path below.
        let umem = Umem(NonNull::new(raw).ok_or(ENOMEM)?);
        // SAFETY: `raw` is the live umem just made; `umem.writable` is
        // immutable.
        let writable = unsafe { (*raw).umem.writable() } != 0;
        // Record the pages already present (no fault), as C rxe does at
        // registration: the first access to them then needs no fault.
        let mask = if writable { PFN_WRITE as u64 } else { 0 };
        // SAFETY: `raw` is live; the range is the umem's own.
        let ret = unsafe { bindings::ib_umem_odp_map_dma_and_lock(raw, addr, len, mask, false) };
        if ret < 0 {
            // SAFETY: Ours, never published; nothing else uses it.
            unsafe { bindings::ib_umem_odp_release(raw) };
            return Err(Error::from_errno(ret));
        }
        // SAFETY: `ib_umem_odp_map_dma_and_lock` succeeded, so this thread
        // holds `umem_mutex`.
        unsafe { bindings::mutex_unlock(&raw mut (*raw).umem_mutex) };
        // On failure the initializer drops `umem` unreleased: release it
        // through an `OdpUmem` that owns it.
        // INVARIANT: The `OdpUmem` takes over the umem, made for `[addr,
        // addr + len)`.
        KBox::pin_init(
            pin_init!(Self {
                umem <- new_mutex!(Some(umem)),
                addr,
                len: size,
                writable,
            }),
            GFP_KERNEL,
        )
        .inspect_err(|_| {
            // SAFETY: The initializer failed before the umem was moved
            // into a live `OdpUmem`; nothing else has the pointer.
            unsafe { bindings::ib_umem_odp_release(raw) };
        })
    }

    /// Ends access to the memory and releases the umem (its notifier and
    /// page table): waits for an access in progress (a fault included);
    /// every later access fails with [`OdpError::Released`].  Idempotent.
    /// May sleep.
    pub(crate) fn release(&self) {
        let umem = self.umem.lock().take();
        if let Some(u) = umem {
            // Taken out under the lock that every access holds (type
            // invariant), so no access uses it any more and none will.
            // SAFETY: We own it, and this is its one release (type invariant
            // of `Umem`).
            unsafe { bindings::ib_umem_odp_release(u.0.as_ptr()) };
        }
    }

    /// The user address of region offset `off`, if `[off, off + len)` is
    /// inside the region.
    fn user_va(&self, off: usize, len: usize) -> Result<u64, OdpError> {
        let end = off.checked_add(len).ok_or(OdpError::Range)?;
        if end > self.len {
            return Err(OdpError::Range);
        }
        Ok(self.addr + off as u64)
    }

    /// Runs `op` on `[off, off + len)` of the region with its pages present
    /// (writable if `write`) and held (module docs).  May sleep to fault.
    fn with_pages<R>(
        &self,
        off: usize,
        len: usize,
        write: bool,
        op: impl FnOnce(&Held<'_>) -> Result<R, OdpError>,
    ) -> Result<R, OdpError> {
        let va = self.user_va(off, len)?;
        if write && !self.writable {
            return Err(OdpError::Fault(EPERM));
        }
        let guard = self.umem.lock();
        let raw = guard.as_ref().ok_or(OdpError::Released)?.0.as_ptr();
        // INVARIANT: `raw` is live while `guard` is held (type invariant of
        // `OdpUmem`), and `user_va` checked the range against the region,
        // which the umem covers; an empty range needs no page, and the
        // pages of any other are checked below before `op` gets `held`.
        let held = Held {
            raw,
            off,
            va,
            len,
            _guard: PhantomData,
        };
        if len == 0 {
            return op(&held);
        }
        // SAFETY: `raw` stays live while `guard` is held (type invariant:
        // only `release` frees it, after taking it out under the lock).
        unsafe { bindings::mutex_lock(&raw mut (*raw).umem_mutex) };
        if !held.present(write) {
            // SAFETY: Locked just above by this thread.
            unsafe { bindings::mutex_unlock(&raw mut (*raw).umem_mutex) };
            let mask = if write { PFN_WRITE as u64 } else { 0 };
            // SAFETY: `raw` is live (guard held); the range is inside the
            // umem (checked against the region above).
            let ret =
                unsafe { bindings::ib_umem_odp_map_dma_and_lock(raw, va, len as u64, mask, true) };
            if ret < 0 {
                return Err(OdpError::Fault(Error::from_errno(ret)));
            }
            // Success: `umem_mutex` is held again, and the view current.
            if !held.present(write) {
                // SAFETY: Held since the successful map above.
                unsafe { bindings::mutex_unlock(&raw mut (*raw).umem_mutex) };
                return Err(OdpError::Fault(EFAULT));
            }
        }
        // INVARIANT: every page of the range was seen present (writable for
        // a store) with `umem_mutex` held, and it still is.
        let res = op(&held);
        // SAFETY: Held since the check or the map above.
        unsafe { bindings::mutex_unlock(&raw mut (*raw).umem_mutex) };
        drop(guard);
        res
    }

    /// Appends `n` bytes at offset `off` to `pkt`, calling `f` on each piece
    /// as written (`f` runs under `umem_mutex`: it must only compute).
    pub(crate) fn append_to(
        &self,
        pkt: &mut TxPacket,
        off: usize,
        n: usize,
        f: impl FnMut(&[u8]),
    ) -> Result<(), OdpError> {
        self.with_pages(off, n, false, |h| {
            copy::append_to(h, pkt, off, n, f).map_err(|_| OdpError::Range)
        })
    }

    /// Copies `n` bytes of `skb` at `skb_off` into the region at `off`.
    pub(crate) fn write_from_skb(
        &self,
        off: usize,
        skb: &SkBuff,
        skb_off: usize,
        n: usize,
    ) -> Result<(), OdpError> {
        self.with_pages(off, n, true, |h| {
            copy::write_from_skb(h, off, skb, skb_off, n).map_err(|_| OdpError::Range)
        })
    }

    /// Copies `src` into the region at `off`.
    pub(crate) fn write_bytes(&self, off: usize, src: &[u8]) -> Result<(), OdpError> {
        self.with_pages(off, src.len(), true, |h| {
            copy::write_bytes(h, off, src).map_err(|_| OdpError::Range)
        })
    }

    /// Performs `op` on the 8-byte value at `off` (`copy::atomic64`).
    pub(crate) fn atomic64(&self, off: usize, op: Atomic64Op) -> Result<u64, OdpError> {
        self.with_pages(off, 8, true, |h| {
            copy::atomic64(h, off, op).map_err(|e| {
                if e == EINVAL {
                    OdpError::Misaligned
                } else {
                    OdpError::Range
                }
            })
        })
    }

    /// Brings `[off, off + len)` in as `how` says (`ibv_advise_mr`); the
    /// pages stay unpinned.  May sleep.
    pub(crate) fn prefetch(&self, off: usize, len: usize, how: Prefetch) -> Result<(), OdpError> {
        match how {
            Prefetch::Read => self.with_pages(off, len, false, |_| Ok(())),
            Prefetch::Write => self.with_pages(off, len, true, |_| Ok(())),
            Prefetch::NoFault => {
                let va = self.user_va(off, len)?;
                if len == 0 {
                    return Ok(());
                }
                let guard = self.umem.lock();
                let raw = guard.as_ref().ok_or(OdpError::Released)?.0.as_ptr();
                let mask = if self.writable { PFN_WRITE as u64 } else { 0 };
                // SAFETY: `raw` is live while `guard` is held (type
                // invariant); the range is inside the umem.
                let ret = unsafe {
                    bindings::ib_umem_odp_map_dma_and_lock(raw, va, len as u64, mask, false)
                };
                if ret < 0 {
                    return Err(OdpError::Fault(Error::from_errno(ret)));
                }
                // SAFETY: The successful map left `umem_mutex` held.
                unsafe { bindings::mutex_unlock(&raw mut (*raw).umem_mutex) };
                Ok(())
            }
        }
    }
}

#[pinned_drop]
impl PinnedDrop for OdpUmem {
    fn drop(self: Pin<&mut Self>) {
        // Deregistration released it already; this covers a region whose
        // registration failed after the umem was made (process context).
        self.release();
    }
}

/// A range of an ODP umem whose pages this thread checked present with
/// `umem_mutex` held (or an empty range); its pages may be dereferenced
/// until the mutex is dropped.  It is region offset `off`, user address
/// `va`.
///
/// # Invariants
///
/// `raw` is a live umem for the whole life of a `Held` (the [`OdpUmem`]'s
/// lock is held), and `[va, va + len)` is inside it.  Whenever a `Held`
/// with `len > 0` is lent to an operation (`op` of [`OdpUmem::with_pages`],
/// the only place one is used as [`Pieces`]), `umem_mutex` is held by this
/// thread and every page of the range is present (writable for a store)
/// in its table, for as long as the operation runs.
struct Held<'a> {
    raw: *mut bindings::ib_umem_odp,
    off: usize,
    va: u64,
    len: usize,
    _guard: PhantomData<&'a ()>,
}

impl Held<'_> {
    /// The table entry of the page holding user address `va`.
    fn entry(&self, va: u64) -> c_ulong {
        // SAFETY: `raw` is live (type invariant); the start is immutable.
        let start = unsafe { bindings::ib_umem_start(self.raw) } as u64;
        let idx = ((va - start) >> PAGE_SHIFT) as usize;
        // `hmm_range_fault` writes entries without the mutex, hence the
        // volatile load.
        // SAFETY: `va` is in the held range, inside the umem: `idx` is in
        // its table of one entry per page.
        unsafe { core::ptr::read_volatile((*self.raw).map.pfn_list.add(idx)) }
    }

    /// Whether every page of the range is present (and writable if
    /// `write`).  Called with `umem_mutex` held.
    fn present(&self, write: bool) -> bool {
        let need = if write {
            PFN_VALID | PFN_WRITE
        } else {
            PFN_VALID
        };
        let first = self.va & !(PAGE_SIZE as u64 - 1);
        let last = self.va + self.len as u64 - 1;
        let mut page = first;
        while page <= last {
            if self.entry(page) & need != need {
                return false;
            }
            page += PAGE_SIZE as u64;
        }
        true
    }
}

impl Pieces for Held<'_> {
    fn for_each_piece(
        &self,
        off: usize,
        len: usize,
        mut f: impl FnMut(*mut u8, usize, usize),
    ) -> Result {
        // Only the held range itself may be walked.
        if off != self.off || len != self.len {
            return Err(EFAULT);
        }
        let mut va = self.va;
        let mut done = 0;
        while done < len {
            let in_pg = (va as usize) & (PAGE_SIZE - 1);
            let n = (PAGE_SIZE - in_pg).min(len - done);
            // SAFETY: The page is present and held (type invariant): its
            // entry names a valid pfn.
            let page = unsafe { bindings::hmm_pfn_to_page(self.entry(va)) };
            // SAFETY: The page stays mapped in the process while
            // `umem_mutex` is held (invalidation waits for it); the local
            // mapping is undone right after use, in LIFO order.
            let p = unsafe { bindings::kmap_local_page(page) }.cast::<u8>();
            // SAFETY: `in_pg + n <= PAGE_SIZE`: inside the mapped page.
            f(unsafe { p.add(in_pg) }, done, n);
            // SAFETY: Mapped just above; nothing mapped after it.
            unsafe { bindings::kunmap_local(p.cast()) };
            va += n as u64;
            done += n;
        }
        Ok(())
    }
}

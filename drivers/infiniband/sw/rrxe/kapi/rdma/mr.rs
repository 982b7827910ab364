// SPDX-License-Identifier: GPL-2.0

//! Memory regions: their memory ([`MrMemory`]: pinned user memory, an
//! `ib_umem`, or for a kernel consumer's DMA MR the kernel's direct map)
//! and the MR object the driver allocates for `reg_user_mr` and
//! `get_dma_mr` (`struct ib_mr` followed by the driver's [`Driver::Mr`]),
//! freed by `dereg_mr`.
//!
//! A DMA MR (`get_dma_mr`, what `ib_alloc_pd` makes for a device without a
//! local DMA lkey) covers every address: kernel consumers name their
//! buffers by DMA address, which for a device without a DMA device (virt
//! DMA) is the kernel virtual address.  Its offsets are those addresses;
//! each access checks that the range is in the direct map.  Only local
//! access is granted (remote access to all of kernel memory, ib_core's
//! `IB_PD_UNSAFE_GLOBAL_RKEY`, is refused), and the PD check keeps user
//! QPs away from it.
//!
//! The data path reads and writes pinned memory by page (`copy.rs`): the
//! pages stay pinned as long as the `MrMemory` lives, whatever the process
//! does to its mappings, and every access is bounds-checked against the
//! region.  On-demand-paging memory is not pinned; `odp.rs` holds it.

use core::ptr::NonNull;
use kernel::{bindings, error::from_err_ptr, ffi::c_int, prelude::*, sync::Arc, types::Opaque};

mod copy;
pub(crate) mod odp;

pub(crate) use copy::Atomic64Op;
use copy::Pieces;

use super::device::{Device, Driver};
use super::fast_reg::{FastPages, Registered};
use super::udata::UData;
use crate::kapi::net::{route::TxPacket, skb::SkBuff};

/// Identity of a protection domain (its `struct ib_pd`), to check that a
/// QP and the MRs it uses belong to the same PD.  ib_core keeps a PD alive
/// while a QP or MR uses it, so equal ids mean the same live PD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PdId(usize);

impl PdId {
    pub(super) fn from_raw(pd: *mut bindings::ib_pd) -> Self {
        Self(pd as usize)
    }
}

const PAGE_SIZE: usize = 1 << bindings::PAGE_SHIFT;

/// The memory of a region: user memory pinned by ib_core
/// (`ib_umem_get`, released on drop), the kernel's direct map (`len`
/// covers every address), or one registration of a fast-registration
/// region (`fast_reg.rs`).
///
/// # Invariants
///
/// `backing` upholds the type invariant of [`Backing`]; a `Pinned` umem is
/// owned by `self` and released only by its drop.
pub(crate) struct MrMemory {
    backing: Backing,
    len: usize,
}

/// Where a region's bytes are.
///
/// # Invariants
///
/// In `Pinned`, `umem` is a umem made by `ib_umem_get` (its pages pinned,
/// its page table immutable) that the [`MrMemory`] holding it owns, and
/// each of `pages` is a page of that umem's table, in order, so pinned
/// for as long as the umem is.
enum Backing {
    /// Pinned user memory: the umem and its pages, in order; the region
    /// starts at `first_offset` in the first one.
    Pinned {
        umem: NonNull<bindings::ib_umem>,
        pages: KVVec<NonNull<bindings::page>>,
        first_offset: usize,
    },
    /// The kernel's direct map (offsets are addresses).
    Direct,
    /// Registration `gen` of a fast-registration region.
    Fast { pages: Arc<FastPages>, gen: u64 },
    /// On-demand-paging memory: reached only through the region's
    /// [`odp::OdpUmem`]; no piece is mapped through here.
    OnDemand,
}

// SAFETY: An `ib_umem` (owned, type invariant) is immutable after pinning
// and may be released from any thread.
unsafe impl Send for MrMemory {}
// SAFETY: `&MrMemory` only reads the pinned, immutable `ib_umem` and its
// page list (type invariant of `Backing`), or the lock-protected
// `FastPages`, so it can be shared.
unsafe impl Sync for MrMemory {}

impl MrMemory {
    /// Pins `len` bytes of the calling process's memory at `addr` with
    /// `IB_ACCESS_*` flags `access` (write access pins for writing).
    pub(crate) fn pin<T: Driver>(
        dev: &Device<T>,
        addr: u64,
        len: u64,
        access: u32,
    ) -> Result<Self> {
        let len = usize::try_from(len)?;
        // SAFETY: Called in the context of the process whose memory is
        // pinned (a uverbs command); ib_core validates the range.
        let umem = from_err_ptr(unsafe {
            bindings::ib_umem_get_attr_or_va(
                dev.as_raw(),
                core::ptr::null(),
                0,
                addr,
                len,
                access as c_int,
            )
        })?;
        let umem = NonNull::new(umem).ok_or(ENOMEM)?;
        // INVARIANT: `umem` is the pin just made, owned by `this` from here
        // on (its drop releases it if listing the pages fails); no page is
        // listed yet.
        let mut this = Self {
            backing: Backing::Pinned {
                umem,
                pages: KVVec::new(),
                first_offset: 0,
            },
            len,
        };
        this.collect_pages()?;
        Ok(this)
    }

    /// The kernel's direct map, for a kernel consumer's DMA MR (module
    /// docs): offsets are kernel virtual addresses.
    pub(crate) fn kernel_direct() -> Self {
        // INVARIANT: No umem.
        Self {
            backing: Backing::Direct,
            len: usize::MAX,
        }
    }

    /// The stand-in of an on-demand-paging region of `len` bytes, whose
    /// memory its [`odp::OdpUmem`] reaches: what the region's revocation
    /// and currency checks use.
    pub(crate) fn on_demand(len: u64) -> Result<Self> {
        // INVARIANT: No umem.
        Ok(Self {
            backing: Backing::OnDemand,
            len: usize::try_from(len)?,
        })
    }

    /// Registration `reg` of the fast-registration region `pages`.
    pub(crate) fn fast(pages: Arc<FastPages>, reg: &Registered) -> Result<Self> {
        // INVARIANT: No umem.
        Ok(Self {
            backing: Backing::Fast {
                pages,
                gen: reg.gen,
            },
            len: usize::try_from(reg.len)?,
        })
    }

    /// The fast-registration region this is a registration of.
    pub(crate) fn fast_pages(&self) -> Option<&Arc<FastPages>> {
        match &self.backing {
            Backing::Fast { pages, .. } => Some(pages),
            _ => None,
        }
    }

    /// Whether the memory may still be accessed: false for a
    /// fast-registration region's registration that was invalidated.
    pub(crate) fn is_current(&self) -> bool {
        match &self.backing {
            Backing::Fast { pages, gen } => pages.is_current(*gen),
            _ => true,
        }
    }

    /// Lists the pinned pages from the umem's scatterlist with the
    /// kernel's page iterator (right on every memory model).
    fn collect_pages(&mut self) -> Result {
        let len = self.len;
        let Backing::Pinned {
            umem,
            pages,
            first_offset,
        } = &mut self.backing
        else {
            return Err(EINVAL);
        };
        let u = umem.as_ptr();
        // SAFETY: The umem is pinned and immutable (type invariant of
        // `Backing`); `address` is plain data.
        *first_offset = unsafe { (*u).address } & (PAGE_SIZE - 1);
        let need = (*first_offset + len).div_ceil(PAGE_SIZE);
        pages.reserve(need, GFP_KERNEL)?;
        // SAFETY: The umem is pinned and immutable (type invariant of
        // `Backing`); its table was built by `ib_umem_get` and lives as long
        // as the umem.
        let (sgl, nents) = unsafe { ((*u).sgt_append.sgt.sgl, (*u).sgt_append.sgt.orig_nents) };
        // SAFETY: All-zeroes is a valid (not yet started) iterator.
        let mut it: bindings::sg_page_iter = unsafe { core::mem::zeroed() };
        // SAFETY: `sgl` is a valid list of `nents` entries for the umem's
        // lifetime, which covers this loop.
        unsafe { bindings::__sg_page_iter_start(&mut it, sgl, nents, 0) };
        while pages.len() < need {
            // SAFETY: The iterator was started on a live table above.
            if !unsafe { bindings::__sg_page_iter_next(&mut it) } {
                break;
            }
            // SAFETY: `__sg_page_iter_next` returned true: the iterator is
            // on a page of the table.
            let page = unsafe { bindings::sg_page_iter_page(&mut it) };
            // INVARIANT: The next page of the umem's own table.
            pages.push(NonNull::new(page).ok_or(EFAULT)?, GFP_KERNEL)?;
        }
        if pages.len() != need {
            return Err(EFAULT);
        }
        Ok(())
    }

    /// Appends `n` bytes of the region at offset `off` to `pkt`, copying
    /// straight from the pinned pages into the skb, and calls `f` on each
    /// piece as written (to checksum it while it is in cache).
    pub(crate) fn append_to(
        &self,
        pkt: &mut TxPacket,
        off: usize,
        n: usize,
        f: impl FnMut(&[u8]),
    ) -> Result {
        copy::append_to(self, pkt, off, n, f)
    }

    /// Copies `n` bytes of `skb`'s data at `skb_off` into the region at
    /// offset `off`, from the skb's linear part and fragments directly into
    /// the pinned pages.
    pub(crate) fn write_from_skb(
        &self,
        off: usize,
        skb: &SkBuff,
        skb_off: usize,
        n: usize,
    ) -> Result {
        copy::write_from_skb(self, off, skb, skb_off, n)
    }

    /// Copies `src` into the region at offset `off`.
    pub(crate) fn write_bytes(&self, off: usize, src: &[u8]) -> Result {
        copy::write_bytes(self, off, src)
    }

    /// Performs `op` on the native-endian 8-byte value at offset `off` of
    /// the region (`copy::atomic64`: a locked instruction on the mapped
    /// page, so stronger than C rxe's device-wide lock) and returns the
    /// value found.  `EINVAL` if the value is not 8-byte aligned in memory,
    /// `EFAULT` if it is outside the region.
    pub(crate) fn atomic64(&self, off: usize, op: Atomic64Op) -> Result<u64> {
        copy::atomic64(self, off, op)
    }
}

impl Pieces for MrMemory {
    /// Runs `f` on each piece of `[off, off + len)`, page by page, with the
    /// piece mapped; `EFAULT` if the range is outside the region (or, for
    /// a fast registration, if it was invalidated: `f` then runs under
    /// its lock, see `fast_reg.rs`).  `f` must not sleep.
    fn for_each_piece(
        &self,
        off: usize,
        len: usize,
        mut f: impl FnMut(*mut u8, usize, usize),
    ) -> Result {
        let end = off.checked_add(len).ok_or(EFAULT)?;
        if end > self.len {
            return Err(EFAULT);
        }
        let (pages, first_offset) = match &self.backing {
            Backing::Pinned {
                pages,
                first_offset,
                ..
            } => (pages, *first_offset),
            Backing::Direct => {
                if len == 0 {
                    return Ok(());
                }
                super::wr::check_direct_map(off as u64, len).map_err(|_| EFAULT)?;
                // A kernel consumer's buffer, in the direct map (checked):
                // used in place, as one piece.
                f(off as *mut u8, 0, len);
                return Ok(());
            }
            Backing::OnDemand => return Err(EFAULT),
            Backing::Fast { pages, gen } => {
                // Blocks of the direct map, checked when they were listed.
                return pages.for_each_piece(*gen, off as u64, len as u64, |addr, done, n| {
                    f(addr as usize as *mut u8, done, n)
                });
            }
        };
        let mut pos = off;
        let mut done = 0;
        while done < len {
            let abs = first_offset + pos;
            let (pg, in_pg) = (abs / PAGE_SIZE, abs % PAGE_SIZE);
            let n = (PAGE_SIZE - in_pg).min(len - done);
            let page = *pages.get(pg).ok_or(EFAULT)?;
            // SAFETY: The page is pinned while `self` lives (type invariant
            // of `Backing`); the local mapping is undone right below, in
            // LIFO order.
            let va = unsafe { bindings::kmap_local_page(page.as_ptr()) }.cast::<u8>();
            // SAFETY: `in_pg < PAGE_SIZE`: inside the page just mapped at
            // `va`.
            let piece = unsafe { va.add(in_pg) };
            f(piece, done, n);
            // SAFETY: `va` is the mapping made above and, local mappings
            // being undone in LIFO order, the most recent one still held.
            unsafe { bindings::kunmap_local(va.cast()) };
            pos += n;
            done += n;
        }
        Ok(())
    }
}

impl Drop for MrMemory {
    fn drop(&mut self) {
        if let Backing::Pinned { umem, .. } = self.backing {
            // SAFETY: We own the pin (type invariant) and release it once,
            // here; nothing uses the umem after this.
            unsafe { bindings::ib_umem_release(umem.as_ptr()) };
        }
    }
}

/// An MR as this driver allocates it.
///
/// # Invariants
///
/// Made by `new_mr_obj` as a leaked `KBox` whose first field, `ib`, is the
/// `ib_mr` handed to ib_core; ib_core owns it until `dereg_mr` succeeds,
/// which takes the box back.  `data` and `fast` are initialised all that
/// time, and `fast` is `Some` exactly for a fast-registration region.
#[repr(C)]
struct MrObj<T: Driver> {
    ib: Opaque<bindings::ib_mr>,
    data: T::Mr,
    /// A fast-registration region's block lists (`alloc_mr`).
    fast: Option<Arc<FastPages>>,
}

/// The block lists of MR `mr`, if it is a fast-registration region.
///
/// # Safety
///
/// `mr` is a live MR of driver `T` (made by `reg_user_mr`, `get_dma_mr`
/// or `alloc_mr`), and stays live for `'a`.
pub(super) unsafe fn fast_pages<'a, T: Driver>(mr: *mut bindings::ib_mr) -> Option<&'a FastPages> {
    let obj = mr.cast::<MrObj<T>>();
    // SAFETY: Per the function's contract `mr` is live, so it heads an
    // initialised `MrObj<T>` (type invariant).
    unsafe { (*obj).fast.as_deref() }
}

/// The driver data of MR `mr`.
///
/// # Safety
///
/// As for [`fast_pages`].
pub(super) unsafe fn data<'a, T: Driver>(mr: *mut bindings::ib_mr) -> &'a T::Mr {
    let obj = mr.cast::<MrObj<T>>();
    // SAFETY: Per the function's contract `mr` is live, so it heads an
    // initialised `MrObj<T>` (type invariant).
    unsafe { &(*obj).data }
}

/// `reg_user_mr`.
///
/// # Safety
///
/// Only called by ib_core with a live PD of our device and a valid or null
/// udata.
pub(super) unsafe extern "C" fn reg_user_mr<T: Driver>(
    pd: *mut bindings::ib_pd,
    start: u64,
    length: u64,
    iova: u64,
    access: c_int,
    _dmah: *mut bindings::ib_dmah,
    udata: *mut bindings::ib_udata,
) -> *mut bindings::ib_mr {
    let res = (|| -> Result<*mut bindings::ib_mr> {
        // SAFETY: ib_core passes a live PD of our device (so its driver data
        // is alive) for the call.
        let dev = unsafe { Device::<T>::from_raw((*pd).device) };
        // SAFETY: ib_core passes a null udata or one valid and not otherwise
        // accessed for the call.
        let udata = unsafe { UData::from_raw(udata) };
        let (data, key) = T::reg_user_mr(
            dev,
            PdId::from_raw(pd),
            start,
            length,
            iova,
            access as u32,
            udata,
        )?;
        new_mr_obj::<T>(data, key, None)
    })();
    match res {
        Ok(p) => p,
        Err(e) => e.to_ptr(),
    }
}

/// Allocates the MR object for `data` with `key` as lkey and rkey; ib_core
/// takes the pointer and hands it back to `dereg_mr`.
fn new_mr_obj<T: Driver>(
    data: T::Mr,
    key: u32,
    fast: Option<Arc<FastPages>>,
) -> Result<*mut bindings::ib_mr> {
    let obj = KBox::new(
        MrObj::<T> {
            // SAFETY: All-zeroes is a valid `ib_mr`; ib_core fills in the
            // rest after we return.
            ib: Opaque::new(unsafe { core::mem::zeroed() }),
            data,
            fast,
        },
        GFP_KERNEL,
    )?;
    // INVARIANT: The box is leaked; its first field goes to ib_core, which
    // owns it until `dereg_mr` takes it back.
    let ib = KBox::into_raw(obj).cast::<bindings::ib_mr>();
    // SAFETY: `ib` is the first field of the fresh allocation we own, not
    // yet handed to ib_core, so nothing else accesses it.
    let mr = unsafe { &mut *ib };
    mr.lkey = key;
    mr.rkey = key;
    Ok(ib)
}

/// The most SGEs an `advise_mr` call may name (ib_core bounds user
/// space's list by its attribute size; kernel callers pass their own).
const MAX_ADVISE_SGES: u32 = 1024;

/// `advise_mr`: decodes the advice, the flags and the SGE list (copied)
/// and hands them to [`Driver::advise_mr`].  Unknown advice or flags give
/// `EOPNOTSUPP`.
///
/// # Safety
///
/// Only called by ib_core with a live PD of our device and `num_sge`
/// readable entries at `sg_list`.
pub(super) unsafe extern "C" fn advise_mr<T: Driver>(
    pd: *mut bindings::ib_pd,
    advice: bindings::ib_uverbs_advise_mr_advice,
    flags: u32,
    sg_list: *mut bindings::ib_sge,
    num_sge: u32,
    _attrs: *mut bindings::uverbs_attr_bundle,
) -> c_int {
    let how = match advice {
        bindings::ib_uverbs_advise_mr_advice_IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH => {
            odp::Prefetch::Read
        }
        bindings::ib_uverbs_advise_mr_advice_IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE => {
            odp::Prefetch::Write
        }
        bindings::ib_uverbs_advise_mr_advice_IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT => {
            odp::Prefetch::NoFault
        }
        _ => return crate::kapi::eopnotsupp().to_errno(),
    };
    let flush = bindings::ib_uverbs_advise_mr_flag_IB_UVERBS_ADVISE_MR_FLAG_FLUSH;
    if flags & !flush != 0 {
        return crate::kapi::eopnotsupp().to_errno();
    }
    if num_sge == 0 || num_sge > MAX_ADVISE_SGES || sg_list.is_null() {
        return EINVAL.to_errno();
    }
    let mut sges = KVec::new();
    for i in 0..num_sge as usize {
        // SAFETY: ib_core's contract: `num_sge` readable entries (read at
        // any alignment, as every consumer SGE list here).
        let s = unsafe { sg_list.add(i).read_unaligned() };
        if let Err(e) = sges.push(super::wr::sge(s), GFP_KERNEL) {
            return Error::from(e).to_errno();
        }
    }
    // SAFETY: ib_core passes a live PD of our device.
    let dev = unsafe { Device::<T>::from_raw((*pd).device) };
    match T::advise_mr(dev, PdId::from_raw(pd), how, flags & flush != 0, &sges) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `get_dma_mr`: a kernel consumer's MR over all of its memory (module
/// docs).
///
/// # Safety
///
/// Only called by ib_core (`ib_alloc_pd`, kernel callers) with a live PD
/// of our device.
pub(super) unsafe extern "C" fn get_dma_mr<T: Driver>(
    pd: *mut bindings::ib_pd,
    access: c_int,
) -> *mut bindings::ib_mr {
    // SAFETY: ib_core's contract: a live PD whose device is ours.
    let dev = unsafe { Device::<T>::from_raw((*pd).device) };
    let res = T::get_dma_mr(dev, PdId::from_raw(pd), access as u32)
        .and_then(|(data, key)| new_mr_obj::<T>(data, key, None));
    match res {
        Ok(p) => p,
        Err(e) => e.to_ptr(),
    }
}

/// `alloc_mr`: a fast-registration region (`IB_MR_TYPE_MEM_REG` only)
/// with room for `max_num_sg` blocks, Free.
///
/// # Safety
///
/// Only called by ib_core (`ib_alloc_mr`, kernel callers) with a live PD
/// of our device.
pub(super) unsafe extern "C" fn alloc_mr<T: Driver>(
    pd: *mut bindings::ib_pd,
    mr_type: bindings::ib_mr_type,
    max_num_sg: u32,
) -> *mut bindings::ib_mr {
    // SAFETY: ib_core's contract: a live PD whose device is ours.
    let dev = unsafe { Device::<T>::from_raw((*pd).device) };
    let res = (|| {
        if mr_type != bindings::ib_mr_type_IB_MR_TYPE_MEM_REG {
            return Err(crate::kapi::eopnotsupp());
        }
        if max_num_sg == 0 || max_num_sg > T::MAX_FAST_REG_PAGES {
            return Err(EINVAL);
        }
        let pages = FastPages::new(max_num_sg as usize)?;
        let (data, key) = T::alloc_fast_mr(dev, PdId::from_raw(pd), pages.clone())?;
        new_mr_obj::<T>(data, key, Some(pages))
    })();
    match res {
        Ok(p) => p,
        Err(e) => e.to_ptr(),
    }
}

/// `dereg_mr`.
///
/// # Safety
///
/// Only called by ib_core for an MR returned by `reg_user_mr`,
/// `get_dma_mr` or `alloc_mr` and not deregistered yet.
pub(super) unsafe extern "C" fn dereg_mr<T: Driver>(
    mr: *mut bindings::ib_mr,
    _u: *mut bindings::ib_udata,
) -> c_int {
    // SAFETY: `mr` is live for the call and ib_core set `device`.
    let dev = unsafe { Device::<T>::from_raw((*mr).device) };
    let obj = mr.cast::<MrObj<T>>();
    // SAFETY: By the type invariant of `MrObj`, `mr` is the first field of
    // an `MrObj<T>` from `KBox::into_raw`, live until the `KBox::from_raw`
    // below.
    let data = unsafe { &(*obj).data };
    if let Err(e) = T::dereg_mr(dev, data) {
        return e.to_errno();
    }
    // SAFETY: Deregistered: ib_core never passes this MR again, so the box
    // (type invariant of `MrObj`) is taken back exactly once.
    drop(unsafe { KBox::from_raw(obj) });
    0
}

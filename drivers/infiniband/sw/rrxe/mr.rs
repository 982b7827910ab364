// SPDX-License-Identifier: GPL-2.0

//! Memory regions: user memory pinned for the device, and the per-device
//! table that turns an lkey/rkey into the region.  A key is the table index
//! (24 bits) and a random key byte drawn at every registration, as C rxe
//! does, so keys cannot be guessed from the order of registrations and a
//! stale key for a reused index matches only by a 1-in-256 chance.
//!
//! Regions are shared as `Arc`s (a receive WQE or an RDMA WRITE in
//! progress keeps its region across packets), but the pinned memory is
//! [`Revocable`]: every copy runs under the RCU read lock that
//! [`Revocable::try_access`] takes, and deregistration revokes the memory
//! (waiting out copies in progress) before it returns.  So once `dereg_mr`
//! has returned nothing lands in or is read from the region, whatever
//! message is still open, and the pages are unpinned at once.
//!
//! Deregistration of a fast-registration region waits for no RCU grace
//! period (nvme-rdma deregisters a few hundred of those per controller
//! reset, where a wait each cost seconds); a pinned or on-demand region's
//! waits for one, the revocation's (C rxe's waits for one too):
//!
//! * The table entry goes with [`RcuTable::erase`] (a fast-registration
//!   region's current registration, whichever it is) or
//!   [`RcuTable::remove`]: lookups (`get`, from softirq) find nothing from
//!   then on, and the table's reference is dropped after every lookup that
//!   found the entry has taken its own `Arc`, on the release queue (in
//!   process context: it may be the state's last reference, and that drop
//!   may sleep).  Its work item's memory was allocated with the region
//!   ([`RrxeMr::release`]), so this cannot fail.
//!   A lookup's `Arc` keeps the [`MrState`] itself alive (the classic C
//!   rxe use-after-free, a packet's lookup racing the free, cannot happen:
//!   nothing frees the state while anyone holds it); what deregistration
//!   must end is access to the *memory* through such an `Arc`.
//! * Pinned and on-demand regions: `revoke()` ends it (its grace
//!   period waits out copies in progress under `try_access`; later ones
//!   find nothing), then the pages are unpinned.
//! * Fast-registration regions: `FastPages::invalidate()` ends it without
//!   a grace period.  Every copy from or into the consumer's pages runs
//!   under the region's `FastPages` lock after checking that its
//!   registration's generation is current, and invalidation bumps the
//!   generation under that lock: it waits for a copy in progress and none
//!   starts after, through any state of the region (the current one, the
//!   Free one, older ones a WQE still holds).  The states and the block
//!   lists are plain memory, freed with their last `Arc` (a release work item
//!   or the WQE holding them), as earlier registrations already are.
//!
//! A fast-registration region (`alloc_mr`, kernel consumers) is in the
//! table from allocation on, Free; each REG_MR work request publishes a
//! new [`MrState`] for its registration (key, address, length, rights) in
//! place of the previous one (which goes after an RCU grace period), and
//! a local or remote invalidation ends it.  The registration's memory
//! checks, under the region's lock, that it is still the current one
//! (`kapi/rdma/fast_reg.rs`): a WQE or a WRITE that resolved its key
//! before an invalidation gets nothing from the old pages after it.
//!
//! A region with memory windows bound to it cannot be deregistered
//! (IBTA; `EINVAL`, as on C rxe): a bind counts itself in the
//! region ([`MrState::hold_window`]) and deregistration succeeds only
//! while the count is zero, turning it into a mark no later bind passes.

use kernel::{
    prelude::*,
    revocable::Revocable,
    sync::{
        atomic::{Atomic, Relaxed},
        Arc,
    },
};

use crate::kapi::net::{route::TxPacket, skb::SkBuff};
use crate::kapi::rdma::fast_reg::{FastPages, FastRegError, Registered};
use crate::kapi::rdma::mr::odp::{OdpError, OdpUmem, Prefetch};
use crate::kapi::rdma::mr::{Atomic64Op, MrMemory, PdId};
use crate::kapi::{
    random,
    xarray::{RcuRelease, RcuReleaseSlot, RcuTable},
};
use crate::param;
use crate::proto::wqe::RegReq;

/// One registered region.
#[pin_data]
pub(crate) struct MrState {
    /// Keeps the pages pinned until deregistration revokes it.
    #[pin]
    mem: Revocable<MrMemory>,
    /// An on-demand-paging region's memory (`mem` is then its stand-in):
    /// reached outside RCU, since a fault sleeps; released by
    /// deregistration.
    odp: Option<Pin<KBox<OdpUmem>>>,
    pd: PdId,
    iova: u64,
    length: u64,
    access: u32,
    key: u32,
    /// Memory windows bound to the region, or [`DEREGISTERED`].
    windows: Atomic<u32>,
}

/// `MrState::windows` once deregistration has begun.
const DEREGISTERED: u32 = u32::MAX;

// The access rights (`IB_ACCESS_*`) regions and windows grant.
// `FLUSH_PERSISTENT` is never granted (no persistent memory; the capability
// is not claimed, so ib_core refuses it at registration).
pub(crate) use crate::kapi::rdma::access::{
    FLUSH_GLOBAL, FLUSH_PERSISTENT, LOCAL_WRITE, MW_BIND, REMOTE_ATOMIC, REMOTE_READ, REMOTE_WRITE,
    ZERO_BASED,
};

/// Why a region access was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AccessError {
    /// No current region has this key, it is in another PD, or it was
    /// deregistered.
    Key,
    /// The region does not allow the access.
    Access,
    /// The range is not inside the region.
    Range,
    /// An atomic's target is not 8-byte aligned in memory.
    Misaligned,
    /// An on-demand-paging region's pages could not be faulted in (the
    /// range unmapped, a store to memory the process may not write, the
    /// process gone).
    Fault,
}

impl From<OdpError> for AccessError {
    fn from(e: OdpError) -> Self {
        match e {
            OdpError::Released => AccessError::Key,
            OdpError::Range => AccessError::Range,
            OdpError::Misaligned => AccessError::Misaligned,
            OdpError::Fault(_) => AccessError::Fault,
        }
    }
}

impl MrState {
    /// The region's protection domain.
    pub(crate) fn pd(&self) -> PdId {
        self.pd
    }

    /// The block lists, if this is a fast-registration region's state.
    fn fast_pages(&self) -> Option<Arc<FastPages>> {
        self.mem.try_access().and_then(|m| m.fast_pages().cloned())
    }

    /// Its `IB_ACCESS_*` flags.
    pub(crate) fn access(&self) -> u32 {
        self.access
    }

    /// Counts a memory window bound to the region; false if the region is
    /// being deregistered.
    pub(crate) fn hold_window(&self) -> bool {
        let mut cur = self.windows.load(Relaxed);
        loop {
            if cur == DEREGISTERED || cur == DEREGISTERED - 1 {
                return false;
            }
            match self.windows.cmpxchg(cur, cur + 1, Relaxed) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// A window bound to the region was unbound.
    pub(crate) fn release_window(&self) {
        let mut cur = self.windows.load(Relaxed);
        while cur != 0 && cur != DEREGISTERED {
            match self.windows.cmpxchg(cur, cur - 1, Relaxed) {
                Ok(_) => return,
                Err(now) => cur = now,
            }
        }
    }

    /// The offset in the region of `[addr, addr + len)`, if the region is
    /// in `pd`, allows `need` (`IB_ACCESS_*`, 0 for a local read) and
    /// contains the range.
    pub(crate) fn check(
        &self,
        pd: PdId,
        addr: u64,
        len: u64,
        need: u32,
    ) -> core::result::Result<usize, AccessError> {
        if self.pd != pd {
            return Err(AccessError::Key);
        }
        // An invalidated fast registration (or a Free region).
        if !self.mem.try_access().is_some_and(|m| m.is_current()) {
            return Err(AccessError::Key);
        }
        if self.access & need != need {
            return Err(AccessError::Access);
        }
        let off = addr.checked_sub(self.iova).ok_or(AccessError::Range)?;
        let end = off.checked_add(len).ok_or(AccessError::Range)?;
        if end > self.length {
            return Err(AccessError::Range);
        }
        usize::try_from(off).map_err(|_| AccessError::Range)
    }

    /// Appends `n` region bytes at offset `off` to `pkt` (one copy, from
    /// the pinned pages), calling `f` on each piece as written.
    pub(crate) fn append_to(
        &self,
        pkt: &mut TxPacket,
        off: usize,
        n: usize,
        f: impl FnMut(&[u8]),
    ) -> core::result::Result<(), AccessError> {
        if let Some(odp) = &self.odp {
            return Ok(odp.append_to(pkt, off, n, f)?);
        }
        let mem = self.mem.try_access().ok_or(AccessError::Key)?;
        mem.append_to(pkt, off, n, f)
            .map_err(|_| AccessError::Range)
    }

    /// Copies `n` bytes of `skb` at `skb_off` into the region at `off`
    /// (one copy, into the pinned pages).
    pub(crate) fn write_from_skb(
        &self,
        off: usize,
        skb: &SkBuff,
        skb_off: usize,
        n: usize,
    ) -> core::result::Result<(), AccessError> {
        if let Some(odp) = &self.odp {
            return Ok(odp.write_from_skb(off, skb, skb_off, n)?);
        }
        let mem = self.mem.try_access().ok_or(AccessError::Key)?;
        mem.write_from_skb(off, skb, skb_off, n)
            .map_err(|_| AccessError::Range)
    }
}

impl MrState {
    /// Copies `src` into the region at `off`.
    pub(crate) fn write_bytes(
        &self,
        off: usize,
        src: &[u8],
    ) -> core::result::Result<(), AccessError> {
        if let Some(odp) = &self.odp {
            return Ok(odp.write_bytes(off, src)?);
        }
        let mem = self.mem.try_access().ok_or(AccessError::Key)?;
        mem.write_bytes(off, src).map_err(|_| AccessError::Range)
    }

    /// Performs the 8-byte atomic `op` at offset `off` (checked with
    /// [`MrState::check`]); returns the value found there.
    pub(crate) fn atomic(
        &self,
        off: usize,
        op: Atomic64Op,
    ) -> core::result::Result<u64, AccessError> {
        if let Some(odp) = &self.odp {
            return Ok(odp.atomic64(off, op)?);
        }
        let mem = self.mem.try_access().ok_or(AccessError::Key)?;
        mem.atomic64(off, op).map_err(|e| {
            if e == EINVAL {
                AccessError::Misaligned
            } else {
                AccessError::Range
            }
        })
    }
}

impl MrState {
    /// Whether this is an on-demand-paging region.
    pub(crate) fn is_on_demand(&self) -> bool {
        self.odp.is_some()
    }

    /// Brings `len` bytes at offset `off` of an on-demand-paging region in
    /// as `how` says (`ibv_advise_mr`, which checked the region's rights).
    /// `EINVAL` for another region or one deregistered.  May sleep.
    pub(crate) fn prefetch(&self, off: usize, len: usize, how: Prefetch) -> Result {
        let odp = self.odp.as_ref().ok_or(EINVAL)?;
        odp.prefetch(off, len, how).map_err(|e| match e {
            OdpError::Released => EINVAL,
            OdpError::Range | OdpError::Misaligned => EFAULT,
            OdpError::Fault(e) => e,
        })
    }
}

/// The handle ib_core's `struct ib_mr` carries.
pub(crate) struct RrxeMr {
    pub(crate) state: Arc<MrState>,
    /// The work item memory that deregistration uses to remove the
    /// region's table entry without a wait, allocated with the region so
    /// that deregistration cannot fail.
    release: RcuReleaseSlot<MrState>,
}

impl RrxeMr {
    /// The region's key (lkey = rkey).
    pub(crate) fn state_key(&self) -> u32 {
        self.state.key
    }
}

/// Index of a key.
pub(crate) fn index(key: u32) -> u32 {
    key >> 8
}

/// The key for table index `idx` (1 ..= 2^24 - 1) and key byte `byte`.
pub(crate) fn make_key(idx: u32, byte: u8) -> u32 {
    (idx << 8) | u32::from(byte)
}

/// A fresh key byte from the kernel's random number generator.
pub(crate) fn random_key_byte() -> u8 {
    let mut b = [0u8; 1];
    random::fill(&mut b);
    b[0]
}

/// The MR table of one device: regions by key index, readable under RCU.
#[pin_data]
pub(crate) struct MrTable {
    #[pin]
    table: RcuTable<MrState>,
}

impl MrTable {
    /// An empty table.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self { table <- RcuTable::new() })
    }

    /// Registers a region of pinned memory `mem` at `iova`; returns it with
    /// its key.  `ENOMEM` when all `MAX_MR` indices are in use.  May sleep.
    pub(crate) fn register(
        &self,
        mem: MrMemory,
        pd: PdId,
        iova: u64,
        length: u64,
        access: u32,
    ) -> Result<RrxeMr> {
        self.register_with(mem, None, pd, iova, length, access)
    }

    /// Registers an on-demand-paging region (`odp`) at `iova`, as
    /// [`MrTable::register`].  May sleep.
    pub(crate) fn register_on_demand(
        &self,
        odp: Pin<KBox<OdpUmem>>,
        pd: PdId,
        iova: u64,
        length: u64,
        access: u32,
    ) -> Result<RrxeMr> {
        self.register_with(
            MrMemory::on_demand(length)?,
            Some(odp),
            pd,
            iova,
            length,
            access,
        )
    }

    fn register_with(
        &self,
        mem: MrMemory,
        odp: Option<Pin<KBox<OdpUmem>>>,
        pd: PdId,
        iova: u64,
        length: u64,
        access: u32,
    ) -> Result<RrxeMr> {
        let slot = self.table.reserve(1, param::MAX_MR as u32)?;
        let key = make_key(slot.index(), random_key_byte());
        let state = Arc::pin_init(
            pin_init!(MrState {
                mem <- Revocable::new(mem),
                odp,
                pd,
                iova,
                length,
                access,
                key,
                windows: Atomic::new(0),
            }),
            GFP_KERNEL,
        )?;
        let release = RcuReleaseSlot::new(GFP_KERNEL)?;
        slot.publish(state.clone())?;
        Ok(RrxeMr { state, release })
    }

    /// The region `key` names, if the key (index and key byte) is current.
    pub(crate) fn lookup(&self, key: u32) -> Option<Arc<MrState>> {
        self.table.get(index(key)).filter(|s| s.key == key)
    }

    /// Removes `mr` from the table and ends access to its memory (module
    /// docs): copies in progress finish first, later accesses through a WQE
    /// or a WRITE still holding the region fail, and pinned pages are
    /// unpinned before this returns.  One RCU grace period (the pinned or
    /// on-demand memory's revocation), none for a fast-registration region.
    /// `EINVAL`, and nothing changes, while memory windows are bound to
    /// it.  May sleep.
    pub(crate) fn deregister(&self, mr: &RrxeMr) -> Result {
        // A fast-registration region: its current registration is what
        // the table holds.
        let pages = mr.state.fast_pages();
        let cur = match pages {
            Some(_) => self.table.get(index(mr.state.key)).ok_or(EINVAL)?,
            None => mr.state.clone(),
        };
        if cur.windows.cmpxchg(0, DEREGISTERED, Relaxed).is_err() {
            return Err(EINVAL);
        }
        // Past the mark only once (ib_core deregisters a region once it
        // succeeded), so the slot still holds the work item's memory.
        if let Some(rel) = mr.release.take() {
            if pages.is_some() {
                // The index is the region's own: whatever registration is
                // there (a REG_MR racing this one included) is the region's.
                self.table.erase(index(cur.key), rel);
            } else {
                self.table.remove(index(cur.key), &cur, rel);
            }
        }
        if let Some(pages) = pages {
            pages.invalidate();
            return Ok(());
        }
        if let Some(odp) = &cur.odp {
            // Waits for an access in progress (a fault included); later
            // ones fail as a deregistered key.
            odp.release();
        }
        cur.mem.revoke();
        Ok(())
    }

    /// `alloc_mr`: a fast-registration region in `pd` whose mappings
    /// `pages` holds, Free.  May sleep.
    pub(crate) fn alloc_fast(&self, pd: PdId, pages: Arc<FastPages>) -> Result<RrxeMr> {
        let free = Registered {
            gen: 0,
            iova: 0,
            len: 0,
        };
        self.register(MrMemory::fast(pages, &free)?, pd, 0, 0, 0)
    }

    /// REG_MR posted on a kernel QP in `pd`: the region `req` names takes
    /// the blocks its last `map_mr_sg` listed, with `req`'s key and
    /// rights.  The error is the reason it fails (the region must be Free,
    /// in `pd`, and the key's index its own).  Sleeps to allocate.
    pub(crate) fn fast_register(
        &self,
        req: &RegReq,
        pd: PdId,
    ) -> core::result::Result<(), &'static str> {
        let cur = self.table.get(req.mr_index).ok_or("unknown region")?;
        let pages = cur.fast_pages().ok_or("not a fast-registration region")?;
        if cur.pd != pd {
            return Err("region in another PD than the QP");
        }
        if index(req.key) != req.mr_index {
            return Err("key of another region");
        }
        if req.access & !FAST_REG_ACCESS != 0 {
            return Err("rights a fast registration cannot grant");
        }
        if req.access & (REMOTE_WRITE | REMOTE_ATOMIC) != 0 && req.access & LOCAL_WRITE == 0 {
            // IBTA: remote write or atomic rights need local write.
            return Err("remote write without local write");
        }
        let rel = RcuRelease::new(GFP_KERNEL).map_err(|_| "out of memory")?;
        let reg = pages.register().map_err(|e| match e {
            FastRegError::NotFree => "region not Free (registered already)",
            FastRegError::NotMapped => "no map_mr_sg before the registration",
        })?;
        let state = MrMemory::fast(pages.clone(), &reg).and_then(|mem| {
            Arc::pin_init(
                pin_init!(MrState {
                    mem <- Revocable::new(mem),
                    odp: None,
                    pd,
                    iova: reg.iova,
                    length: reg.len,
                    access: req.access,
                    key: req.key,
                    windows: Atomic::new(0),
                }),
                GFP_KERNEL,
            )
        });
        let placed = match state {
            Ok(state) => self
                .table
                .replace(req.mr_index, &cur, state, rel)
                .map_err(|_| "region deregistered or changed meanwhile"),
            Err(_) => Err("out of memory"),
        };
        if placed.is_err() {
            pages.invalidate();
        }
        placed
    }

    /// Invalidates the fast registration `key` names, for a QP in `pd`
    /// (LOCAL_INV, or a SEND with Invalidate): the region becomes Free and
    /// no access through the registration happens once this returns.  The
    /// error is the reason it fails.  Any context.
    pub(crate) fn invalidate_fast(
        &self,
        key: u32,
        pd: PdId,
    ) -> core::result::Result<(), &'static str> {
        let cur = self.lookup(key).ok_or("unknown region or stale key")?;
        let pages = cur
            .fast_pages()
            .ok_or("not a fast-registration region (only those can be invalidated)")?;
        if cur.pd != pd {
            return Err("region in another PD than the QP");
        }
        if cur.windows.load(Relaxed) != 0 {
            return Err("memory windows are bound to the region");
        }
        pages.invalidate();
        Ok(())
    }
}

/// The rights a fast registration may grant.
const FAST_REG_ACCESS: u32 = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC | MW_BIND;

/// `IB_ACCESS_ON_DEMAND`: an on-demand-paging region (not pinned).
pub(crate) const ON_DEMAND: u32 = crate::kapi::rdma::access::ON_DEMAND;
/// Access flags rrxe refuses: huge-page on-demand-paging regions (as C
/// rxe).
pub(crate) const UNSUPPORTED_ACCESS: u32 = crate::kapi::rdma::access::HUGETLB;

#[kernel::macros::kunit_tests(rrxe_mr)]
mod tests {
    use super::*;

    #[test]
    fn key_carries_index() {
        for idx in [1u32, 2, 77, (param::MAX_MR as u32)] {
            for b in [0u8, 1, 0x5a, u8::MAX] {
                assert_eq!(index(make_key(idx, b)), idx);
                assert_eq!(make_key(idx, b) & 0xff, u32::from(b));
            }
        }
    }

    #[test]
    fn key_bytes_are_random() {
        // 64 draws: all equal with probability 2^-504; a counter-derived
        // or constant byte (the old scheme) fails the spread check too.
        let mut seen = [false; 256];
        for _ in 0..64 {
            seen[usize::from(random_key_byte())] = true;
        }
        assert!(seen.iter().filter(|s| **s).count() > 16);
    }
}

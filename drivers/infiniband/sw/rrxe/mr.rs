// SPDX-License-Identifier: GPL-2.0

//! Memory regions: user memory pinned for the device, and the per-device
//! table that turns an lkey/rkey into the region.  A key is the table index
//! (24 bits) and a key byte that changes with every registration, so a
//! stale key for a reused index does not match.  Regions are shared as
//! `Arc`s: the data path keeps one while it copies, so deregistration never
//! frees memory in use.

use kernel::{
    bindings,
    prelude::*,
    sync::{
        atomic::{Atomic, Relaxed},
        Arc,
    },
};

use crate::kapi::net::{route::TxPacket, skb::SkBuff};
use crate::kapi::rdma::mr::{PdId, UserMemory};
use crate::kapi::xarray::RcuTable;
use crate::param;

/// One registered region.
pub(crate) struct MrState {
    /// Keeps the pages pinned.
    mem: UserMemory,
    pd: PdId,
    iova: u64,
    length: u64,
    access: u32,
    key: u32,
}

/// `IB_ACCESS_LOCAL_WRITE`: receives may scatter into the region.
pub(crate) const LOCAL_WRITE: u32 = bindings::ib_access_flags_IB_ACCESS_LOCAL_WRITE;
/// `IB_ACCESS_REMOTE_WRITE`.
pub(crate) const REMOTE_WRITE: u32 = bindings::ib_access_flags_IB_ACCESS_REMOTE_WRITE;

/// Why a region access was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AccessError {
    /// No current region has this key, or it is in another PD.
    Key,
    /// The region does not allow the access.
    Access,
    /// The range is not inside the region.
    Range,
}

impl MrState {
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
        self.mem
            .append_to(pkt, off, n, f)
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
        self.mem
            .write_from_skb(off, skb, skb_off, n)
            .map_err(|_| AccessError::Range)
    }
}

/// The handle ib_core's `struct ib_mr` carries.
pub(crate) struct RrxeMr {
    pub(crate) state: Arc<MrState>,
}

impl RrxeMr {
    /// The region's key (lkey = rkey).
    pub(crate) fn state_key(&self) -> u32 {
        self.state.key
    }
}

/// Index of a key.
fn index(key: u32) -> u32 {
    key >> 8
}

/// The key for table index `idx` (1 ..= 2^24 - 1) at allocation counter
/// `n`: the index in the upper 24 bits, a key byte from the counter below,
/// so re-registration at the same index yields a different key.
fn make_key(idx: u32, n: u32) -> u32 {
    (idx << 8) | (n.wrapping_mul(0x9e37_79b9) >> 24)
}

/// The MR table of one device: regions by key index, readable under RCU.
#[pin_data]
pub(crate) struct MrTable {
    #[pin]
    table: RcuTable<MrState>,
    /// Registrations so far: the key byte of the next one derives from it.
    generation: Atomic<u32>,
}

impl MrTable {
    /// An empty table.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self { table <- RcuTable::new(), generation: Atomic::new(0) })
    }

    /// Registers a region of pinned memory `mem` at `iova`; returns it with
    /// its key.  `ENOMEM` when all `MAX_MR` indices are in use.  May sleep.
    pub(crate) fn register(
        &self,
        mem: UserMemory,
        pd: PdId,
        iova: u64,
        length: u64,
        access: u32,
    ) -> Result<RrxeMr> {
        let slot = self.table.reserve(1, param::MAX_MR as u32)?;
        let n = self.generation.fetch_add(1, Relaxed);
        let key = make_key(slot.index(), n);
        let state = Arc::new(
            MrState {
                mem,
                pd,
                iova,
                length,
                access,
                key,
            },
            GFP_KERNEL,
        )?;
        slot.publish(state.clone())?;
        Ok(RrxeMr { state })
    }

    /// The region `key` names, if the key (index and key byte) is current.
    pub(crate) fn lookup(&self, key: u32) -> Option<Arc<MrState>> {
        self.table.get(index(key)).filter(|s| s.key == key)
    }

    /// Removes `mr` from the table; its memory stays pinned until the last
    /// user of the region (a WQE in flight) drops it.  May sleep.
    pub(crate) fn deregister(&self, mr: RrxeMr) {
        drop(self.table.remove(index(mr.state.key), &mr.state));
    }
}

/// Access flags rrxe refuses: on-demand paging is not claimed.
pub(crate) const UNSUPPORTED_ACCESS: u32 = bindings::ib_access_flags_IB_ACCESS_ON_DEMAND;

#[kernel::macros::kunit_tests(rrxe_mr)]
mod tests {
    use super::*;

    #[test]
    fn key_carries_index() {
        for idx in [1u32, 2, 77, (param::MAX_MR as u32)] {
            for n in [0u32, 1, 12345, u32::MAX] {
                assert_eq!(index(make_key(idx, n)), idx);
            }
        }
    }

    #[test]
    fn reuse_of_an_index_changes_the_key() {
        let max = param::MAX_MR as u32;
        // The same index comes back after `max` allocations.
        let a = make_key(5, 4);
        let b = make_key(5, 4 + max);
        assert_ne!(a, b);
        assert_eq!(index(a), index(b));
    }
}

// SPDX-License-Identifier: GPL-2.0

//! Memory regions: user memory pinned for the device, and the per-device
//! table that turns an lkey/rkey into the region.  A key is the table index
//! (24 bits) and a key byte that changes with every registration, so a
//! stale key for a reused index does not match.  Regions are shared as
//! `Arc`s: the data path keeps one while it copies, so deregistration never
//! frees memory in use.

use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{bindings, prelude::*, sync::Arc, xarray::{AllocKind, XArray}};

use crate::kapi::rdma::mr::UserMemory;
use crate::param;

/// One registered region.  The data path (responder, requester) reads the
/// range and access fields; until it lands only the key is read.
#[allow(dead_code)]
pub(crate) struct MrState {
    /// Keeps the pages pinned.
    mem: UserMemory,
    iova: u64,
    length: u64,
    access: u32,
    key: u32,
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
fn index(key: u32) -> usize {
    (key >> 8) as usize
}

/// The key for table index `idx` (1 ..= 2^24 - 1) at allocation counter
/// `n`: the index in the upper 24 bits, a key byte from the counter below,
/// so re-registration at the same index yields a different key.
fn make_key(idx: u32, n: u32) -> u32 {
    (idx << 8) | (n.wrapping_mul(0x9e37_79b9) >> 24)
}

/// The MR table of one device.
#[pin_data]
pub(crate) struct MrTable {
    #[pin]
    xa: XArray<Arc<MrState>>,
    /// Next index to try and the key-byte generation.
    next: AtomicU32,
}

impl MrTable {
    /// An empty table.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self { xa <- XArray::new(AllocKind::Alloc1), next: AtomicU32::new(0) })
    }

    /// Registers a region of pinned memory `mem` at `iova`; returns it with
    /// its key.  `ENOMEM` when all `MAX_MR` indices are in use.
    pub(crate) fn register(&self, mem: UserMemory, iova: u64, length: u64, access: u32) -> Result<RrxeMr> {
        let max = param::MAX_MR as u32;
        let mut guard = self.xa.lock();
        for _ in 0..max {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            let idx = n % max + 1;
            if guard.get(idx as usize).is_some() {
                continue;
            }
            let key = make_key(idx, n);
            let state = Arc::new(MrState { mem, iova, length, access, key }, GFP_KERNEL)?;
            guard.store(idx as usize, state.clone(), GFP_KERNEL).map_err(|e| e.error)?;
            return Ok(RrxeMr { state });
        }
        Err(ENOMEM)
    }

    /// The region `key` names, if the key (index and key byte) is current.
    #[allow(dead_code)] // the data path's lkey/rkey check
    pub(crate) fn lookup(&self, key: u32) -> Option<Arc<MrState>> {
        let guard = self.xa.lock();
        let s = guard.get(index(key))?;
        (s.key == key).then(|| s.into())
    }

    /// Removes `mr` from the table; its memory stays pinned until the last
    /// user of the region drops it.
    pub(crate) fn deregister(&self, mr: RrxeMr) {
        let mut guard = self.xa.lock();
        let current = guard.get(index(mr.state.key)).is_some_and(|s| s.key == mr.state.key);
        if current {
            drop(guard.remove(index(mr.state.key)));
        }
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
                assert_eq!(index(make_key(idx, n)), idx as usize);
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

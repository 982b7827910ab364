// SPDX-License-Identifier: GPL-2.0

//! Memory windows: a window gives remote peers access, through its own
//! rkey, to a range of a registered region with rights of its own.  Its
//! key is a table index above the regions' (so a key says which table it
//! names, as on C rxe) and a key byte that every bind replaces.
//!
//! * Type 1 windows are bound with `ibv_bind_mw` (librxe posts the bind
//!   on the send queue), PD-wide, and unbound by a bind of length 0.
//! * Type 2 windows are bound through a QP's send queue, serve only that
//!   QP's peer, and are unbound by LOCAL_INV or by a SEND with
//!   Invalidate that QP receives.
//!
//! The checks are IBTA's, stricter than C rxe where C rxe is loose: the
//! region must be in the window's PD (C rxe does not check), a remote
//! access must fall inside the window itself (C rxe checks only the
//! region's bounds), and invalidating a window that is not bound fails
//! cleanly (a NULL dereference on C rxe).  A bound window counts itself in
//! its region, which then refuses deregistration.

use kernel::{new_spinlock, prelude::*, sync::Arc, sync::SpinLock};

use crate::kapi::rdma::mr::PdId;
use crate::kapi::rdma::mw::MwType;
use crate::kapi::xarray::{RcuRelease, RcuTable};
use crate::mr::{
    index, make_key, random_key_byte, AccessError, MrState, MrTable, LOCAL_WRITE, MW_BIND,
    REMOTE_ATOMIC, REMOTE_READ, REMOTE_WRITE, ZERO_BASED,
};
use crate::param;
use crate::proto::mw::{window_address, MwBind};

/// First table index of a window (the regions' indices are below).
const FIRST_INDEX: u32 = param::MAX_MR as u32 + 1;
/// Last table index of a window.
const LAST_INDEX: u32 = param::MAX_MR as u32 + param::MAX_MW as u32;

/// Access flags a bind may give (the remote rights, zero-based
/// addressing; the local ones librxe may pass along mean nothing here).
const BIND_ACCESS: u32 =
    REMOTE_READ | REMOTE_WRITE | REMOTE_ATOMIC | ZERO_BASED | LOCAL_WRITE | MW_BIND;

/// Whether `key` names a memory window rather than a region.
pub(crate) fn is_window_key(key: u32) -> bool {
    (FIRST_INDEX..=LAST_INDEX).contains(&index(key))
}

/// A QP as a type 2 window remembers it: its number and a serial number
/// unique for the device's life, so a later QP that reuses the number is
/// not mistaken for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QpIdent {
    pub(crate) qpn: u32,
    pub(crate) serial: u64,
}

/// What a window is bound to.
struct Binding {
    /// Counted in the region (`MrState::hold_window`).
    mr: Arc<MrState>,
    /// Start of the window, as an address of the region.
    addr: u64,
    len: u64,
    /// The remote rights the window gives.
    access: u32,
    /// Type 2: the QP it was bound through.
    qp: Option<QpIdent>,
}

impl Binding {
    /// The region address of `[va, va + len)` given through the window.
    fn translate(&self, va: u64, len: u64) -> core::result::Result<u64, AccessError> {
        window_address(self.addr, self.len, self.access & ZERO_BASED != 0, va, len)
            .ok_or(AccessError::Range)
    }
}

/// The lock-protected part of a window.
struct MwInner {
    /// The current rkey; 0 once deallocated.
    rkey: u32,
    binding: Option<Binding>,
}

impl MwInner {
    /// Unbinds the window and releases its count in the region; returns
    /// the region for the caller to drop after the lock (never the last
    /// reference while the region is registered, but cheap to be sure).
    fn unbind(&mut self) -> Option<Arc<MrState>> {
        let b = self.binding.take()?;
        b.mr.release_window();
        Some(b.mr)
    }
}

/// One memory window.
#[pin_data]
pub(crate) struct MwState {
    pd: PdId,
    kind: MwType,
    index: u32,
    #[pin]
    inner: SpinLock<MwInner>,
}

/// The handle ib_core's `struct ib_mw` carries.
pub(crate) struct RrxeMw {
    state: Arc<MwState>,
    /// The work item that drops the table's reference after deallocation.
    release: RcuRelease<MwState>,
}

/// The window table of one device, readable under RCU.
#[pin_data]
pub(crate) struct MwTable {
    #[pin]
    table: RcuTable<MwState>,
}

impl MwTable {
    /// An empty table.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self { table <- RcuTable::new() })
    }

    /// A new, unbound window of `kind` in `pd`, with its rkey.  `ENOMEM`
    /// when all `MAX_MW` indices are in use.
    pub(crate) fn allocate(&self, pd: PdId, kind: MwType) -> Result<(RrxeMw, u32)> {
        let slot = self.table.reserve(FIRST_INDEX, LAST_INDEX)?;
        let index = slot.index();
        let rkey = make_key(index, random_key_byte());
        let state = Arc::pin_init(
            pin_init!(MwState {
                pd,
                kind,
                index,
                inner <- new_spinlock!(MwInner { rkey, binding: None }),
            }),
            GFP_KERNEL,
        )?;
        let release = RcuRelease::new(GFP_KERNEL)?;
        slot.publish(state.clone())?;
        Ok((RrxeMw { state, release }, rkey))
    }

    /// Removes `mw` from the table and unbinds it; an access that found it
    /// just before sees a key that no longer matches.
    pub(crate) fn deallocate(&self, mw: RrxeMw) {
        self.table.remove(mw.state.index, &mw.state, mw.release);
        let mut g = mw.state.inner.lock();
        g.rkey = 0;
        let old = g.unbind();
        drop(g);
        drop(old);
    }

    /// The window at the index of `rkey` (the caller compares the whole
    /// key under the window's lock).
    fn lookup(&self, rkey: u32) -> Option<Arc<MwState>> {
        if !is_window_key(rkey) {
            return None;
        }
        self.table.get(index(rkey))
    }

    /// Carries out the bind WQE `b` posted on QP `qp` (in `pd`): binds the
    /// window to the range of the region `b` names, with `b`'s rights and
    /// key byte, or unbinds a type 1 window (length 0).  The error is the
    /// reason the bind fails (`IB_WC_MW_BIND_ERR`).
    pub(crate) fn bind(
        &self,
        mrs: &MrTable,
        qp: QpIdent,
        pd: PdId,
        b: &MwBind,
    ) -> core::result::Result<(), &'static str> {
        let mw = self.lookup(b.mw_rkey).ok_or("unknown memory window")?;
        if mw.pd != pd {
            return Err("window in another PD than the QP");
        }
        if b.access & !BIND_ACCESS != 0 {
            return Err("unsupported access flags");
        }
        let zero_based = b.access & ZERO_BASED != 0;
        if mw.kind == MwType::One && zero_based {
            return Err("zero-based type 1 window");
        }
        if mw.kind == MwType::Two && b.length == 0 {
            return Err("type 2 bind of length 0");
        }
        // The region (unless this unbinds a type 1 window), checked before
        // the window's lock is taken.
        let mr = if b.length == 0 {
            None
        } else {
            let mr = mrs.lookup(b.mr_lkey).ok_or("unknown region")?;
            if mr.pd() != pd {
                return Err("region in another PD than the window");
            }
            if mr.access() & MW_BIND == 0 {
                return Err("region does not allow binding windows");
            }
            if b.access & (REMOTE_WRITE | REMOTE_ATOMIC) != 0 && mr.access() & LOCAL_WRITE == 0 {
                return Err("remote write through a region without local write");
            }
            mr.check(pd, b.addr, b.length, 0)
                .map_err(|_| "window outside the region")?;
            Some(mr)
        };
        let mut g = mw.inner.lock();
        if g.rkey != b.mw_rkey {
            return Err("unknown memory window");
        }
        if mw.kind == MwType::Two && g.binding.is_some() {
            return Err("type 2 window already bound");
        }
        if mr.as_ref().is_some_and(|mr| !mr.hold_window()) {
            return Err("region being deregistered");
        }
        let old = g.unbind();
        g.binding = mr.map(|mr| Binding {
            mr,
            addr: b.addr,
            len: b.length,
            access: b.access,
            qp: (mw.kind == MwType::Two).then_some(qp),
        });
        g.rkey = make_key(mw.index, b.rkey as u8);
        drop(g);
        drop(old);
        Ok(())
    }

    /// Invalidates the type 2 window `rkey` names, for a QP in `pd`:
    /// LOCAL_INV (`by` None) or a SEND with Invalidate received by QP `by`
    /// (which must be the QP the window was bound through).  The error is
    /// the reason it fails.
    pub(crate) fn invalidate(
        &self,
        rkey: u32,
        pd: PdId,
        by: Option<QpIdent>,
    ) -> core::result::Result<(), &'static str> {
        if !is_window_key(rkey) {
            return Err("key of a region (only fast-registration regions can be invalidated)");
        }
        let mw = self.lookup(rkey).ok_or("unknown memory window")?;
        if mw.kind == MwType::One {
            return Err("type 1 windows cannot be invalidated");
        }
        if mw.pd != pd {
            return Err("window in another PD than the QP");
        }
        let mut g = mw.inner.lock();
        if g.rkey != rkey {
            return Err("unknown memory window");
        }
        let b = g.binding.as_ref().ok_or("window not bound")?;
        if by.is_some() && b.qp != by {
            return Err("window bound through another QP");
        }
        let old = g.unbind();
        drop(g);
        drop(old);
        Ok(())
    }

    /// The region and offset a remote access of `[va, va + len)` with
    /// rights `need` through window `rkey` reaches, for QP `qp` in `pd`.
    pub(crate) fn resolve(
        &self,
        rkey: u32,
        pd: PdId,
        qp: QpIdent,
        va: u64,
        len: u64,
        need: u32,
    ) -> core::result::Result<(Arc<MrState>, usize), AccessError> {
        let mw = self.lookup(rkey).ok_or(AccessError::Key)?;
        if mw.pd != pd {
            return Err(AccessError::Key);
        }
        let g = mw.inner.lock();
        if g.rkey != rkey {
            return Err(AccessError::Key);
        }
        let b = g.binding.as_ref().ok_or(AccessError::Key)?;
        if b.qp.is_some_and(|q| q != qp) {
            return Err(AccessError::Key);
        }
        if b.access & need != need {
            return Err(AccessError::Access);
        }
        let addr = b.translate(va, len)?;
        let off = b.mr.check(b.mr.pd(), addr, len, 0)?;
        Ok((b.mr.clone(), off))
    }
}

#[kernel::macros::kunit_tests(rrxe_mw)]
mod tests {
    use super::*;

    #[test]
    fn window_keys_are_above_region_keys() {
        assert!(!is_window_key(make_key(1, 0)));
        assert!(!is_window_key(make_key(param::MAX_MR as u32, 0xff)));
        assert!(is_window_key(make_key(FIRST_INDEX, 0)));
        assert!(is_window_key(make_key(LAST_INDEX, 0x7f)));
        assert!(!is_window_key(make_key(LAST_INDEX + 1, 0)));
        assert!(LAST_INDEX < 1 << 24);
    }
}

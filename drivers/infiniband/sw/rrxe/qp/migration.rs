// SPDX-License-Identifier: GPL-2.0

//! Automatic path migration (APM, IBTA 17.2.8): a connected QP may hold an
//! alternate path (`IB_QP_ALT_PATH`), armed by `path_mig_state` REARM.
//! While armed, the QP migrates to it when
//!
//! * its requester exhausts its transport retries on the primary path
//!   (instead of failing, it resends on the alternate path with a fresh
//!   retry budget), or
//! * a packet from its peer arrives on the alternate path (the peer
//!   migrated): the receive path lets it in, and the responder or the
//!   completer migrates once it has accepted the packet (its PSN and
//!   opcode checked: a stale acknowledgement or an out-of-window request
//!   moves nothing), before answering it, so the answer goes out on the
//!   new path.
//!
//! Migrating makes the alternate path the primary one, leaves no
//! alternate path, sets the state to MIGRATED and raises
//! `IB_EVENT_PATH_MIG`.  The consumer may load a new alternate path and
//! rearm.  Path writers (`modify_qp` and a migration) are serialised by
//! the QP's path lock, never taken in the receive path's softirq context,
//! and taken with interrupts off: that softirq reads the paths lock-free
//! and waits out a write in progress, so a write must not be interrupted
//! on its CPU by the softirq that waits for it.
//!
//! There is no arming handshake: REARM arms at once, and rrxe, like C rxe,
//! sends the BTH MigReq bit as 0 and ignores it on receipt.  ib_core
//! accepts `IB_QP_ALT_PATH` on a RoCE port only from a device with
//! `IBK_ROCE_ALT_PATH` (patches/0008), which rrxe sets because it copies
//! the GIDs at `modify_qp` and keeps no GID attribute reference.

use kernel::sync::{
    atomic::{Acquire, Release},
    lock::Guard,
};

use super::{path::Endpoints, Qp};
use crate::kapi::rdma::{event::QpEvent, qp::QpAttr};
use crate::kapi::spinlock_irq::SpinLockIrqBackend;

/// `IB_MIG_MIGRATED`: no alternate path armed.
pub(crate) const MIGRATED: u32 = 0;
/// `IB_MIG_ARMED` (the consumer's `IB_MIG_REARM`, 1, arms at once too):
/// the alternate path may be migrated to.
pub(crate) const ARMED: u32 = 2;

/// What the path lock protects besides the path cells and `mig`.
#[derive(Default)]
pub(crate) struct PathsInner {
    /// A migration happened that the QP's attributes do not show yet
    /// ([`PathWriter::settle`] moves the alternate path's attributes to
    /// the primary ones).
    unsettled: bool,
}

/// The QP's path lock, held: the only writer of its paths and migration
/// state, so `modify_qp` and a migration never interleave.  A spinlock
/// taken with interrupts off, inside the attribute, send and receive
/// locks and never in the receive path's softirq context (which reads the
/// paths lock-free and would spin forever on a write it interrupted).
pub(crate) struct PathWriter<'a> {
    qp: &'a Qp,
    inner: Guard<'a, PathsInner, SpinLockIrqBackend>,
}

impl PathWriter<'_> {
    /// Moves the alternate path's attributes to the primary ones in `a`
    /// (the QP's attributes, their lock held) if the QP migrated since
    /// they were last settled.
    pub(crate) fn settle(&mut self, a: &mut QpAttr) {
        if core::mem::take(&mut self.inner.unsettled) {
            a.path = a.alt_path;
            a.alt_path = Default::default();
            a.timeout = a.alt_timeout;
            a.pkey_index = a.alt_pkey_index;
            a.port_num = a.alt_port_num;
        }
    }

    pub(crate) fn set_primary(&self, ep: Option<&Endpoints>) {
        self.qp.path.set(ep);
    }

    pub(crate) fn set_alternate(&self, ep: Option<&Endpoints>) {
        self.qp.alt_path.set(ep);
    }

    /// Sets the migration state: MIGRATED or ARMED.
    pub(crate) fn set_state(&self, m: u32) {
        self.qp
            .mig
            .store(if m == MIGRATED { MIGRATED } else { ARMED }, Release);
    }
}

impl Qp {
    /// Takes the path lock.
    pub(crate) fn path_writer(&self) -> PathWriter<'_> {
        PathWriter {
            qp: self,
            inner: self.paths.lock(),
        }
    }

    /// The migration state as `query_qp` reports it.
    pub(crate) fn mig_state(&self) -> u32 {
        self.mig.load(Acquire)
    }

    /// Whether an alternate path is armed.  Any context.
    pub(crate) fn alternate_armed(&self) -> bool {
        self.mig.load(Acquire) == ARMED
    }

    /// Whether the receive path accepts a packet from `src` to `dst` on
    /// the alternate path: only while it is armed.  Any context.
    pub(crate) fn alternate_accepts(&self, src: &[u8], dst: &[u8]) -> bool {
        self.alternate_armed() && self.alt_path.get().is_some_and(|a| a.ips.accepts(src, dst))
    }

    /// Migrates to the alternate path if one is armed; true if it did.
    /// Process context.
    pub(crate) fn migrate(&self) -> bool {
        let mut w = self.path_writer();
        if !self.alternate_armed() {
            return false;
        }
        let Some(alt) = self.alt_path.get() else {
            return false;
        };
        w.set_primary(Some(&alt));
        w.set_alternate(None);
        w.set_state(MIGRATED);
        w.inner.unsettled = true;
        drop(w);
        crate::rrxe_ratelimited!(
            pr_info,
            "rrxe: QP {:#x}: migrated to the alternate path\n",
            self.qpn
        );
        self.raise(QpEvent::PathMig);
        true
    }
}

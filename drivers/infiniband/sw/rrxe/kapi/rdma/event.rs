// SPDX-License-Identifier: GPL-2.0

//! Asynchronous events of a QP (`struct ib_event` delivered to the QP's
//! `event_handler`: for a user QP, uverbs queues it on the process's async
//! event file, where `ibv_get_async_event` reads it).
//!
//! The data path raises events from its tasks, and the tasks may still run
//! after `destroy_qp` returned and ib_core freed the QP.  So the raw QP
//! pointer lives in a [`QpEvents`] cell that `destroy_qp` empties (under its
//! lock) before ib_core frees the QP: an event raised afterwards is dropped,
//! and one raised concurrently finishes before the QP goes.  So the QP's
//! `event_handler` is never called for a freed QP.

use kernel::{
    bindings, new_spinlock,
    prelude::*,
    sync::{Arc, SpinLock},
};

/// An asynchronous QP event rrxe raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QpEvent {
    /// `IB_EVENT_QP_ACCESS_ERR`: the responder refused a remote access
    /// that no receive WQE could report (IBTA C9-222.1).
    AccessErr,
    /// `IB_EVENT_SQ_DRAINED`: the QP reached SQD with nothing outstanding
    /// (only if `en_sqd_async_notify` was set).
    SqDrained,
    /// `IB_EVENT_PATH_MIG`: the QP migrated to its alternate path.
    PathMig,
    /// `IB_EVENT_QP_LAST_WQE_REACHED`: a QP attached to an SRQ entered the
    /// error state and will take no more WQEs from it.
    LastWqeReached,
}

impl QpEvent {
    fn raw(self) -> bindings::ib_event_type {
        match self {
            Self::AccessErr => bindings::ib_event_type_IB_EVENT_QP_ACCESS_ERR,
            Self::SqDrained => bindings::ib_event_type_IB_EVENT_SQ_DRAINED,
            Self::PathMig => bindings::ib_event_type_IB_EVENT_PATH_MIG,
            Self::LastWqeReached => bindings::ib_event_type_IB_EVENT_QP_LAST_WQE_REACHED,
        }
    }
}

/// The raw QP pointer, valid while stored in a [`QpEvents`].
///
/// # Invariants
///
/// `self.0` is the `ib_qp` of a QP of this driver.  While the `RawQp` is
/// in its [`QpEvents`] cell the QP exists; it is only dereferenced under
/// the cell's lock.
struct RawQp(*mut bindings::ib_qp);

// SAFETY: Only dereferenced under the `QpEvents` lock, while the QP exists
// (type invariant).
unsafe impl Send for RawQp {}

/// The identity of a QP as a kernel consumer knows it (its `struct
/// ib_qp` address), carried in kernel completions (`wc.qp`).  Only an
/// address, never dereferenced by this driver: a consumer that destroys a
/// QP with completions still queued gets the stale pointer, as on C rxe.
/// The default is no QP (a null `wc.qp`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QpHandle(pub(super) usize);

/// Raises asynchronous events on a QP.  Clones may outlive the QP:
/// `destroy_qp` disconnects them first, after which [`QpEvents::raise`]
/// does nothing.
///
/// # Invariants
///
/// `cell` holds `Some` only while the QP exists: `destroy_qp` sets it to
/// `None`, under its lock, before ib_core frees the QP, and nothing sets it
/// back.  `handle` is only an address, never dereferenced.
#[derive(Clone)]
pub(crate) struct QpEvents {
    cell: Arc<SpinLock<Option<RawQp>>>,
    handle: QpHandle,
}

impl QpEvents {
    /// The events of the QP `qp`, which `create_qp` is creating.
    ///
    /// # Safety
    ///
    /// `qp` is the QP being created; the caller disconnects the result
    /// before ib_core frees it (`destroy_qp`, or a failed creation).
    pub(super) unsafe fn new(qp: *mut bindings::ib_qp) -> Result<Self> {
        // INVARIANT: Only `create_qp` calls this, with the QP being created,
        // which lives until `destroy_qp` disconnects the cell.  A failed
        // creation disconnects it too.
        Ok(Self {
            cell: Arc::pin_init(new_spinlock!(Some(RawQp(qp))), GFP_KERNEL)?,
            handle: QpHandle(qp as usize),
        })
    }

    /// The QP's identity for kernel completions.
    pub(crate) fn handle(&self) -> QpHandle {
        self.handle
    }

    /// Delivers `ev` to the QP's event handler, if the QP still exists.
    /// Any context; the handler does not sleep.
    pub(crate) fn raise(&self, ev: QpEvent) {
        let guard = self.cell.lock();
        let Some(raw) = guard.as_ref() else { return };
        // SAFETY: By the type invariant the QP exists while `Some`
        // (cleared under this lock before ib_core frees it); `device` is set
        // for its lifetime.
        let device = unsafe { (*raw.0).device };
        // SAFETY: All-zeroes is a valid `ib_event` (a union of pointers
        // and a port number, then an enum).
        let mut event: bindings::ib_event = unsafe { core::mem::zeroed() };
        event.device = device;
        event.element.qp = raw.0;
        event.event = ev.raw();
        // SAFETY: The QP exists while `Some` (type invariant); ib_core sets
        // `event_handler` and `qp_context` when the QP is created and they
        // stay valid while it exists.
        let (handler, context) = unsafe { ((*raw.0).event_handler, (*raw.0).qp_context) };
        if let Some(h) = handler {
            // SAFETY: ib_core's handler for this QP, called with a valid
            // event for it and the context ib_core registered.
            unsafe { h(&mut event, context) };
        }
    }

    pub(super) fn disconnect(&self) {
        // INVARIANT: `None` names no QP; nothing stores one again.
        *self.cell.lock() = None;
    }
}

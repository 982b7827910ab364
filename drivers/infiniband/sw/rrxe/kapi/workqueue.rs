// SPDX-License-Identifier: GPL-2.0

//! What the `kernel::workqueue` module lacks: a workqueue the driver owns
//! ([`OwnedQueue`]: unbound, so its work items run on any CPU, with a
//! concurrency limit), and a slot to reach it from any context
//! ([`QueueSlot`]).

use core::{ops::Deref, ptr::NonNull};
use kernel::{
    bindings,
    prelude::*,
    sync::atomic::{Acquire, Atomic, Full, Release},
    workqueue::Queue,
};

/// `WQ_MAX_ACTIVE`: the largest concurrency limit a workqueue may have.
pub(crate) const MAX_ACTIVE: i32 = bindings::wq_consts_WQ_MAX_ACTIVE as i32;

/// A workqueue the driver allocated (`alloc_workqueue` with `WQ_UNBOUND`):
/// work items run on any CPU, up to `max_active` at a time; one work item
/// never runs concurrently with itself (the workqueue guarantees that per
/// work item).  Dropping it drains and destroys it.
pub(crate) struct OwnedQueue(NonNull<bindings::workqueue_struct>);

// SAFETY: Workqueues are built for concurrent use.
unsafe impl Send for OwnedQueue {}
// SAFETY: queue_work and flush on one workqueue from several CPUs at
// once are what workqueues are built for.
unsafe impl Sync for OwnedQueue {}

impl OwnedQueue {
    /// Allocates an unbound queue called `name` running up to `max_active`
    /// items at once, at high priority if `highpri`.
    pub(crate) fn new_unbound(name: &'static CStr, max_active: i32, highpri: bool) -> Result<Self> {
        let mut flags = bindings::wq_flags_WQ_UNBOUND | bindings::wq_flags_WQ_MEM_RECLAIM;
        if highpri {
            flags |= bindings::wq_flags_WQ_HIGHPRI;
        }
        // SAFETY: `"%s"` with one NUL-terminated string argument.
        let wq = unsafe {
            bindings::alloc_workqueue_noprof(
                c"%s".as_char_ptr(),
                flags,
                max_active,
                name.as_char_ptr(),
            )
        };
        Ok(Self(NonNull::new(wq).ok_or(ENOMEM)?))
    }
}

impl Deref for OwnedQueue {
    type Target = Queue;

    fn deref(&self) -> &Queue {
        // SAFETY: The queue lives until `drop`.
        unsafe { Queue::from_raw(self.0.as_ptr()) }
    }
}

impl Drop for OwnedQueue {
    fn drop(&mut self) {
        // SAFETY: We own the queue; `destroy_workqueue` drains it first, so
        // every queued item has run (and dropped what it held) on return.
        unsafe { bindings::destroy_workqueue(self.0.as_ptr()) };
    }
}

/// A place for the module's [`OwnedQueue`], reachable from any context
/// (softirq receive, verbs, work items) without holding a reference.
/// [`QueueSlot::with`] runs under RCU; [`SlotGuard`]'s drop empties the
/// slot, waits for those readers, then destroys (drains) the queue.
pub(crate) struct QueueSlot(Atomic<*mut bindings::workqueue_struct>);

impl QueueSlot {
    /// An empty slot.
    pub(crate) const fn new() -> Self {
        Self(Atomic::new(core::ptr::null_mut()))
    }

    /// Puts `q` in the slot (which must be empty) until the guard drops.
    pub(crate) fn install(&'static self, q: OwnedQueue) -> Result<SlotGuard> {
        let raw = q.0.as_ptr();
        self.0
            .cmpxchg(core::ptr::null_mut(), raw, Full)
            .map_err(|_| EBUSY)?;
        Ok(SlotGuard {
            slot: self,
            q: Some(q),
        })
    }

    /// Runs `f` with the queue, or returns `None` if the slot is empty.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&Queue) -> R) -> Option<R> {
        let _rcu = kernel::sync::rcu::read_lock();
        let raw = self.0.load(Acquire);
        if raw.is_null() {
            return None;
        }
        // SAFETY: A non-null pointer read under RCU stays valid until the
        // read lock is dropped: `SlotGuard::drop` clears the slot and waits
        // for a grace period before destroying the queue.
        Some(f(unsafe { Queue::from_raw(raw) }))
    }
}

/// Owns the queue in a [`QueueSlot`].
pub(crate) struct SlotGuard {
    slot: &'static QueueSlot,
    q: Option<OwnedQueue>,
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        self.slot.0.store(core::ptr::null_mut(), Release);
        // SAFETY: Plain call; waits until no `with` can still see the queue.
        unsafe { bindings::synchronize_rcu() };
        drop(self.q.take());
    }
}

// SPDX-License-Identifier: GPL-2.0

//! What the `kernel::workqueue` module lacks: a workqueue the driver owns
//! (an ordered one, so the work items it runs are serialised in queueing
//! order), and cancelling a pending delayed work item held by an `Arc`.

use core::{ops::Deref, ptr::NonNull};
use kernel::{
    bindings,
    prelude::*,
    sync::Arc,
    workqueue::{HasDelayedWork, Queue, Work},
};

/// An ordered workqueue (`alloc_ordered_workqueue`): at most one item runs
/// at a time, in queueing order.  Dropping it drains and destroys it.
pub(crate) struct OrderedQueue(NonNull<bindings::workqueue_struct>);

// SAFETY: Workqueues are built for concurrent use.
unsafe impl Send for OrderedQueue {}
// SAFETY: See above.
unsafe impl Sync for OrderedQueue {}

impl OrderedQueue {
    /// Allocates an ordered queue called `name`, whose workers run at high
    /// priority if `highpri` (they then preempt busy-polling user threads
    /// on wakeup instead of waiting for the scheduler tick).
    pub(crate) fn new(name: &'static CStr, highpri: bool) -> Result<Self> {
        let mut flags = bindings::wq_flags_WQ_UNBOUND | bindings::wq_flags___WQ_ORDERED | bindings::wq_flags_WQ_MEM_RECLAIM;
        if highpri {
            flags |= bindings::wq_flags_WQ_HIGHPRI;
        }
        // SAFETY: `"%s"` with one NUL-terminated string argument.
        let wq = unsafe {
            bindings::alloc_workqueue_noprof(c"%s".as_char_ptr(), flags, 1, name.as_char_ptr())
        };
        Ok(Self(NonNull::new(wq).ok_or(ENOMEM)?))
    }
}

impl Deref for OrderedQueue {
    type Target = Queue;
    fn deref(&self) -> &Queue {
        // SAFETY: The queue lives until `drop`.
        unsafe { Queue::from_raw(self.0.as_ptr()) }
    }
}

impl Drop for OrderedQueue {
    fn drop(&mut self) {
        // SAFETY: We own the queue; `destroy_workqueue` drains it first, so
        // every queued item has run (and dropped what it held) on return.
        unsafe { bindings::destroy_workqueue(self.0.as_ptr()) };
    }
}

/// Cancels `item`'s delayed work if it is pending (its timer has not fired
/// yet).  Returns true if it was: the reference the queue held is dropped
/// here, since the work will not run.  A work item already running is not
/// waited for.
pub(crate) fn cancel_delayed<T, const ID: u64>(item: &Arc<T>) -> bool
where
    T: HasDelayedWork<T, ID>,
{
    let ptr = Arc::as_ptr(item).cast_mut();
    // SAFETY: `ptr` points into a live `Arc<T>`; the work field lies within
    // it, and for a `HasDelayedWork` type that field is the `work` member of
    // a `struct delayed_work`.
    let cancelled = unsafe {
        let work = Work::raw_get(<T as kernel::workqueue::HasWork<T, ID>>::raw_get_work(ptr));
        let dwork = kernel::container_of!(work, bindings::delayed_work, work);
        bindings::cancel_delayed_work(dwork)
    };
    if cancelled {
        // SAFETY: Enqueueing an `Arc<T>` leaks one reference with
        // `Arc::into_raw`, which the work function would have reclaimed with
        // `Arc::from_raw`; the work was cancelled before running, so that
        // reference is ours to give back, exactly once.
        drop(unsafe { Arc::from_raw(ptr) });
    }
    cancelled
}

/// A place for the module's [`OrderedQueue`], reachable from any context
/// (softirq receive, verbs, work items) without holding a reference.
/// [`QueueSlot::with`] runs under RCU; [`SlotGuard`]'s drop empties the
/// slot, waits for those readers, then destroys (drains) the queue.
pub(crate) struct QueueSlot(core::sync::atomic::AtomicPtr<bindings::workqueue_struct>);

impl QueueSlot {
    /// An empty slot.
    pub(crate) const fn new() -> Self {
        Self(core::sync::atomic::AtomicPtr::new(core::ptr::null_mut()))
    }

    /// Puts `q` in the slot (which must be empty) until the guard drops.
    pub(crate) fn install(&'static self, q: OrderedQueue) -> Result<SlotGuard> {
        let raw = q.0.as_ptr();
        self.0
            .compare_exchange(core::ptr::null_mut(), raw, core::sync::atomic::Ordering::AcqRel, core::sync::atomic::Ordering::Acquire)
            .map_err(|_| EBUSY)?;
        Ok(SlotGuard { slot: self, q: Some(q) })
    }

    /// Runs `f` with the queue, or returns `None` if the slot is empty.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&Queue) -> R) -> Option<R> {
        let _rcu = kernel::sync::rcu::read_lock();
        let raw = self.0.load(core::sync::atomic::Ordering::Acquire);
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
    q: Option<OrderedQueue>,
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        self.slot.0.store(core::ptr::null_mut(), core::sync::atomic::Ordering::Release);
        // SAFETY: Plain call; waits until no `with` can still see the queue.
        unsafe { bindings::synchronize_rcu() };
        drop(self.q.take());
    }
}

// SPDX-License-Identifier: GPL-2.0

//! What the `kernel::workqueue` module lacks: a workqueue the driver owns
//! ([`OwnedQueue`]: unbound, so its work items run on any CPU, with a
//! concurrency limit), and a slot to reach it from any context
//! ([`QueueSlot`]).
//!
//! Both wrap the C workqueue API (`alloc_workqueue`, `destroy_workqueue`,
//! `queue_work_on`, `queue_rcu_work`, `__flush_workqueue`): a queue is
//! destroyed, and so drained, exactly once, and never while a slot reader
//! can still reach it.

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
///
/// # Invariants
///
/// `self.0` is a live workqueue made by `alloc_workqueue`, owned by `self`
/// and destroyed only by its drop.
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
        // INVARIANT: A non-null `wq` is the queue just allocated, owned by
        // the returned value.
        Ok(Self(NonNull::new(wq).ok_or(ENOMEM)?))
    }
}

impl Deref for OwnedQueue {
    type Target = Queue;

    fn deref(&self) -> &Queue {
        // SAFETY: By the type invariant the queue lives until `drop`, so for
        // the borrow of `self`.
        unsafe { Queue::from_raw(self.0.as_ptr()) }
    }
}

impl Drop for OwnedQueue {
    fn drop(&mut self) {
        // SAFETY: We own the queue (type invariant) and destroy it once,
        // here; `destroy_workqueue` drains it first, so every queued item
        // has run (and dropped what it held) on return.
        unsafe { bindings::destroy_workqueue(self.0.as_ptr()) };
    }
}

/// A place for the module's [`OwnedQueue`], reachable from any context
/// (softirq receive, verbs, work items) without holding a reference.
/// Every use of the queue runs under RCU (`QueueSlot::with_raw`);
/// [`SlotGuard`]'s drop empties the slot, waits for those readers, then
/// destroys (drains) the queue.
///
/// # Invariants
///
/// `self.0` is null or the queue of the [`OwnedQueue`] held by the slot's
/// one live [`SlotGuard`].  That queue is destroyed only after the pointer
/// was cleared and an RCU grace period and `rcu_barrier` have passed, so a
/// non-null pointer read under `rcu_read_lock` stays a live queue until the
/// read lock is dropped.
pub(crate) struct QueueSlot(Atomic<*mut bindings::workqueue_struct>);

impl QueueSlot {
    /// An empty slot.
    pub(crate) const fn new() -> Self {
        // INVARIANT: Empty.
        Self(Atomic::new(core::ptr::null_mut()))
    }

    /// Puts `q` in the slot (which must be empty) until the guard drops.
    pub(crate) fn install(&'static self, q: OwnedQueue) -> Result<SlotGuard> {
        let raw = q.0.as_ptr();
        // INVARIANT: The slot was empty; it now holds `q`'s queue, which the
        // guard returned owns and destroys only after emptying the slot.
        self.0
            .cmpxchg(core::ptr::null_mut(), raw, Full)
            .map_err(|_| EBUSY)?;
        Ok(SlotGuard {
            slot: self,
            q: Some(q),
        })
    }

    /// Runs `f` with the queue's pointer under the RCU read lock, or
    /// returns `None` if the slot is empty.  By the type invariant the
    /// pointer is a live queue until `f` returns (`SlotGuard::drop` clears
    /// the slot and waits for a grace period before it destroys the queue).
    fn with_raw<R>(&self, f: impl FnOnce(*mut bindings::workqueue_struct) -> R) -> Option<R> {
        let _rcu = kernel::sync::rcu::read_lock();
        let raw = self.0.load(Acquire);
        (!raw.is_null()).then(|| f(raw))
    }

    /// Runs `f` with the queue, or returns `None` if the slot is empty.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&Queue) -> R) -> Option<R> {
        // SAFETY: `with_raw` passes a live queue, valid until it returns.
        self.with_raw(|raw| f(unsafe { Queue::from_raw(raw) }))
    }

    /// Queues `w` on the slot's queue for CPU `cpu` (`queue_work_on`: on an
    /// unbound queue, a worker of that CPU's pod); `None` if the slot is
    /// empty.  Any context.
    pub(crate) fn enqueue_on<W, const ID: u64>(
        &self,
        cpu: kernel::cpu::CpuId,
        w: W,
    ) -> Option<W::EnqueueOutput>
    where
        W: kernel::workqueue::RawWorkItem<ID> + Send + 'static,
    {
        // `cpu` is a possible CPU (`CpuId`), each of which an unbound queue
        // maps to the pool of its pod (an offline CPU's work runs elsewhere).
        let cpu = i32::from(cpu);
        self.with_raw(|raw| {
            let queue = move |work_ptr: *mut bindings::work_struct| {
                // SAFETY: `raw` is live while `with_raw` runs us;
                // `__enqueue` passes a valid work item.
                unsafe { bindings::queue_work_on(cpu, raw, work_ptr) }
            };
            // `__enqueue` keeps `work_ptr` valid for the closure and, once
            // it returned true, until the item has run; `W` is `Send +
            // 'static`.
            // SAFETY: As `Queue::enqueue`, with the closure above.
            unsafe { w.__enqueue(queue) }
        })
    }

    /// Queues `rwork` on the slot's queue once an RCU grace period has
    /// passed (`queue_rcu_work`); false, and nothing queued, if the slot
    /// is empty.  Any context.
    ///
    /// # Safety
    ///
    /// `rwork` is an initialised work item that is not queued and stays
    /// valid until its function has run.
    pub(crate) unsafe fn queue_rcu_work(&self, rwork: *mut bindings::rcu_work) -> bool {
        self.with_raw(|raw| {
            // `SlotGuard::drop` also waits for the callback that queues
            // `rwork` (`rcu_barrier`).
            // SAFETY: `raw` is live while `with_raw` runs us; `rwork` per
            // the function's contract.
            unsafe { bindings::queue_rcu_work(raw, rwork) };
        })
        .is_some()
    }

    /// Waits until the work queued on the slot's queue so far has run (no
    /// effect on an empty slot).  May sleep; not from a work item of the
    /// queue.
    ///
    /// # Safety
    ///
    /// The slot's [`SlotGuard`] does not drop during the call.
    pub(crate) unsafe fn flush(&self) {
        let raw = self.0.load(Acquire);
        if !raw.is_null() {
            // SAFETY: By the type invariant a non-null pointer is the
            // guard's queue, which lives through the call (the function's
            // contract).
            unsafe { bindings::__flush_workqueue(raw) };
        }
    }
}

/// Owns the queue in a [`QueueSlot`] (whose type invariant names it).
pub(crate) struct SlotGuard {
    slot: &'static QueueSlot,
    q: Option<OwnedQueue>,
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        // INVARIANT: The slot is emptied before the queue goes; the waits
        // below let every reader that saw the pointer finish first.
        self.slot.0.store(core::ptr::null_mut(), Release);
        // SAFETY: Plain call; waits until no `with` can still see the queue.
        unsafe { bindings::synchronize_rcu() };
        // SAFETY: Plain call; waits until the RCU callbacks of
        // `queue_rcu_work` calls made so far have queued their work, which
        // the drop below then drains.
        unsafe { bindings::rcu_barrier() };
        drop(self.q.take());
    }
}

// SPDX-License-Identifier: GPL-2.0

//! An index table readable under RCU: `Arc<T>`s in a C `struct xarray`
//! allocated with `XA_FLAGS_ALLOC`, for objects that are looked up from
//! softirq context (a received packet's QP) and created and destroyed in
//! process context.  What `kernel::xarray` (7.2) lacks for that: lookups
//! without the spinlock (`xa_load` under RCU), cyclic index allocation, and
//! an explicit reserve-then-publish insertion.
//!
//! * [`RcuTable::reserve`] allocates a free index (`__xa_alloc_cyclic` with
//!   a NULL entry: the slot is reserved, lookups see nothing);
//!   [`Reservation::publish`] stores the object there; dropping an
//!   unpublished reservation frees the index.  Nothing is allocated under
//!   the spinlock except by the xarray itself, which drops the lock for
//!   its `GFP_KERNEL` node allocations.
//! * [`RcuTable::get`] is RCU-safe from any context.
//! * Removal ([`RcuTable::remove`], [`RcuTable::erase`],
//!   [`RcuTable::replace`]) takes the entry out at once and waits for
//!   nothing: the table's reference is dropped after an RCU grace period
//!   (so a reader that found the entry has taken its own reference by
//!   then), in process context, by a work item on the release queue
//!   ([`ReleaseQueue`], `queue_rcu_work`), so the drop may sleep.  The
//!   work item's memory ([`RcuRelease`]) is allocated beforehand, with the
//!   object, so removal neither sleeps nor allocates nor fails: a kernel
//!   consumer destroys an address handle under a spinlock, and an
//!   NVMe/RDMA host tearing down its queues destroys hundreds of objects,
//!   where a grace period each (about 12 ms under TCG) added up to
//!   seconds.  [`RcuReleaseSlot`] keeps that memory in an object that is
//!   only shared, so that its destruction takes it without a lock.

use super::workqueue::{OwnedQueue, QueueSlot, SlotGuard, MAX_ACTIVE};
use core::{marker::PhantomData, ptr::NonNull};
use kernel::{
    alloc::Flags,
    bindings,
    prelude::*,
    sync::{
        atomic::{Atomic, Full},
        Arc,
    },
    types::ForeignOwnable,
    types::Opaque,
};

/// The workqueue on which removed entries are dropped ([`ReleaseQueue`]).
static RELEASES: QueueSlot = QueueSlot::new();

/// Owns the release queue.  The module creates it before any table and
/// drops it last, after every device (so after every removal); dropping
/// it waits for the grace periods of the removals made and drains the
/// queue, so no release runs after the module is gone.
pub(crate) struct ReleaseQueue {
    _guard: SlotGuard,
}

impl ReleaseQueue {
    /// Creates the release queue; it serves every table until the guard
    /// drops.
    pub(crate) fn start() -> Result<Self> {
        let q = OwnedQueue::new_unbound(c"rrxe_release", MAX_ACTIVE, false)?;
        Ok(Self {
            _guard: RELEASES.install(q)?,
        })
    }
}

/// `XA_ZERO_ENTRY`: what a reserved slot of an allocating xarray holds
/// (`xa_mk_internal(257)`); loads see NULL, `__xa_cmpxchg` sees this.
fn zero_entry() -> *mut core::ffi::c_void {
    core::ptr::without_provenance_mut((257 << 2) | 2)
}

/// `Arc<T>`s by index, readable under RCU.
///
/// # Invariants
///
/// `xa` is an initialised xarray with `XA_FLAGS_ALLOC`; every non-NULL,
/// non-reserved entry was produced by `Arc::<T>::into_foreign` and is owned
/// by the table.
#[pin_data(PinnedDrop)]
pub(crate) struct RcuTable<T: Send + Sync + 'static> {
    #[pin]
    xa: Opaque<bindings::xarray>,
    /// Where the cyclic allocation continues (`__xa_alloc_cyclic`'s `next`),
    /// only touched under the xarray's lock.
    next: Opaque<u32>,
    _p: PhantomData<Arc<T>>,
}

/// Memory for the work item that drops a removed entry (module docs),
/// allocated ahead of time.
pub(crate) struct RcuRelease<T: Send + Sync + 'static>(KBox<ReleaseCell<T>>);

// SAFETY: The cell owns an `Arc<T>` (`T: Send + Sync`); its work item is
// only initialised and used after the cell has left the owner's hands.
unsafe impl<T: Send + Sync + 'static> Send for RcuRelease<T> {}
// SAFETY: A shared `RcuRelease` gives no access to its contents.
unsafe impl<T: Send + Sync + 'static> Sync for RcuRelease<T> {}

/// An [`RcuRelease`] allocated with an object whose destruction only has
/// a shared reference to it: the first [`RcuReleaseSlot::take`] gets it,
/// later ones get nothing.  Dropping a slot that still holds it frees it.
///
/// # Invariants
///
/// `cell` is null or owns a `ReleaseCell<T>` from `KBox::into_raw` whose
/// `obj` is `None`.
pub(crate) struct RcuReleaseSlot<T: Send + Sync + 'static> {
    cell: Atomic<*mut ReleaseCell<T>>,
}

// SAFETY: The slot owns at most one empty cell (type invariant), which is
// as sendable as `RcuRelease<T>`.
unsafe impl<T: Send + Sync + 'static> Send for RcuReleaseSlot<T> {}
// SAFETY: Shared access only moves the cell out with an atomic exchange,
// so at most one caller ever owns it.
unsafe impl<T: Send + Sync + 'static> Sync for RcuReleaseSlot<T> {}

impl<T: Send + Sync + 'static> RcuReleaseSlot<T> {
    /// A slot holding callback memory allocated with `flags`.
    pub(crate) fn new(flags: Flags) -> Result<Self> {
        let rel = RcuRelease::<T>::new(flags)?;
        // INVARIANT: a fresh, empty cell, owned by the slot from here on.
        Ok(Self {
            cell: Atomic::new(KBox::into_raw(rel.0)),
        })
    }

    /// The callback memory, for the first caller only.  Any context.
    pub(crate) fn take(&self) -> Option<RcuRelease<T>> {
        // INVARIANT: The exchange leaves null, which owns nothing.
        let p = NonNull::new(self.cell.xchg(core::ptr::null_mut(), Full))?;
        // SAFETY: By the type invariant a non-null `cell` owns a leaked
        // `KBox`; the exchange left null behind, so this caller alone takes
        // it back.
        Some(RcuRelease(unsafe { KBox::from_raw(p.as_ptr()) }))
    }
}

impl<T: Send + Sync + 'static> Drop for RcuReleaseSlot<T> {
    fn drop(&mut self) {
        drop(self.take());
    }
}

/// What the release work item frees: the work item first, so its
/// function finds the cell from the `work_struct`'s address (the first
/// field of a `struct rcu_work`).
///
/// # Invariants
///
/// While an [`RcuRelease`] (or an [`RcuReleaseSlot`]) owns the cell, `obj`
/// is `None` and `rwork` is neither initialised nor queued.
/// [`RcuTable::release_after_grace_period`] moves an entry into `obj`,
/// initialises `rwork` and leaks the cell: from then on only the queued
/// work item owns it, and `release_cell` frees it.
#[repr(C)]
struct ReleaseCell<T: Send + Sync + 'static> {
    rwork: Opaque<bindings::rcu_work>,
    obj: Option<Arc<T>>,
}

impl<T: Send + Sync + 'static> RcuRelease<T> {
    /// Allocates the callback's memory with `flags`.
    pub(crate) fn new(flags: Flags) -> Result<Self> {
        // INVARIANT: A fresh cell: no object, its work item neither
        // initialised nor queued.
        Ok(Self(KBox::new(
            ReleaseCell {
                rwork: Opaque::uninit(),
                obj: None,
            },
            flags,
        )?))
    }
}

/// The release work item's function: frees the cell and with it the
/// table's former reference (process context: the drop may sleep).
///
/// # Safety
///
/// `work` is the work item of a `ReleaseCell<T>` leaked by
/// [`RcuTable::release_after_grace_period`] (the first field of its first
/// field, both `repr(C)`), queued once.
unsafe extern "C" fn release_cell<T: Send + Sync + 'static>(work: *mut bindings::work_struct) {
    // SAFETY: Per the function's contract the cell came from
    // `KBox::into_raw` and this is its only release; the workqueue no
    // longer touches the work item once its function runs.
    drop(unsafe { KBox::from_raw(work.cast::<ReleaseCell<T>>()) });
}

// SAFETY: The xarray is internally locked; entries are `Arc<T>` with `T:
// Send + Sync`; `next` is only accessed under the xarray's lock.
unsafe impl<T: Send + Sync + 'static> Send for RcuTable<T> {}
// SAFETY: Shared access only reads entries under RCU or changes the
// xarray under its internal lock; entries are `Arc<T>`, `T: Send + Sync`.
unsafe impl<T: Send + Sync + 'static> Sync for RcuTable<T> {}

/// A reserved index, not yet visible to lookups.
pub(crate) struct Reservation<'a, T: Send + Sync + 'static> {
    table: &'a RcuTable<T>,
    index: u32,
}

impl<T: Send + Sync + 'static> RcuTable<T> {
    /// An empty table.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `xa` is valid memory for an xarray during the call.
            // INVARIANT: initialised with XA_FLAGS_ALLOC.
            xa <- Opaque::ffi_init(|xa| unsafe { bindings::xa_init_flags(xa, bindings::XA_FLAGS_ALLOC) }),
            next: Opaque::new(0),
            _p: PhantomData,
        })
    }

    fn raw(&self) -> *mut bindings::xarray {
        self.xa.get()
    }

    /// Runs `f` with the xarray's spinlock held (the `__xa_*` calls need
    /// it; they drop it only inside their own `GFP_KERNEL` allocations).
    fn with_lock<R>(&self, f: impl FnOnce(*mut bindings::xarray) -> R) -> R {
        // SAFETY: By the type invariant the xarray is initialised.
        unsafe { bindings::xa_lock(self.raw()) };
        let r = f(self.raw());
        // SAFETY: This thread took the lock just above.
        unsafe { bindings::xa_unlock(self.raw()) };
        r
    }

    /// Frees the reserved, unpublished index `index` (`xa_release`: the
    /// slot holds the zero entry, which becomes NULL).
    fn release(&self, index: u32) {
        self.with_lock(|xa| {
            // SAFETY: Valid xarray (type invariant), lock held; replaces the
            // zero entry and nothing else.
            unsafe {
                bindings::__xa_cmpxchg(xa, index as usize, zero_entry(), core::ptr::null_mut(), 0)
            }
        });
    }

    /// Reserves a free index in `first ..= last`, searching cyclically from
    /// the last allocation; `ENOMEM` when the range is full.  May sleep.
    pub(crate) fn reserve(&self, first: u32, last: u32) -> Result<Reservation<'_, T>> {
        self.reserve_gfp(first, last, bindings::GFP_KERNEL)
    }

    /// As [`RcuTable::reserve`], but does not sleep (the xarray's nodes
    /// are allocated with `GFP_ATOMIC`).
    pub(crate) fn reserve_atomic(&self, first: u32, last: u32) -> Result<Reservation<'_, T>> {
        self.reserve_gfp(first, last, bindings::GFP_ATOMIC)
    }

    fn reserve_gfp(
        &self,
        first: u32,
        last: u32,
        gfp: bindings::gfp_t,
    ) -> Result<Reservation<'_, T>> {
        let limit = bindings::xa_limit {
            min: first,
            max: last,
        };
        let mut index = 0u32;
        let ret = self.with_lock(|xa| {
            // SAFETY: Valid xarray (type invariant), lock held: reserves a
            // slot for the NULL entry; `next` is only touched under this
            // lock.
            unsafe {
                bindings::__xa_alloc_cyclic(
                    xa,
                    &mut index,
                    core::ptr::null_mut(),
                    limit,
                    self.next.get(),
                    gfp,
                )
            }
        });
        // 1: the allocation wrapped around, which is fine.
        if ret < 0 {
            return Err(if ret == -(bindings::EBUSY as i32) {
                ENOMEM
            } else {
                Error::from_errno(ret)
            });
        }
        Ok(Reservation { table: self, index })
    }

    /// The object at `index`, if one is published there.  Any context.
    pub(crate) fn get(&self, index: u32) -> Option<Arc<T>> {
        let _rcu = kernel::sync::rcu::read_lock();
        // SAFETY: The xarray is valid (type invariant); `xa_load` may be
        // called under RCU.
        let p = unsafe { bindings::xa_load(self.raw(), index as usize) };
        let p = NonNull::new(p)?;
        // A non-NULL entry stays owned by the table until a grace period
        // after its removal (`remove` waits for one), which cannot end while
        // `_rcu` is held; the borrow becomes a new reference before that.
        // SAFETY: By the type invariant the entry came from
        // `Arc::into_foreign`; it is alive (above).
        let borrowed = unsafe { <Arc<T> as ForeignOwnable>::borrow(p.as_ptr().cast()) };
        Some(borrowed.into())
    }

    /// Removes `obj` from `index` if it is the object there (true) or
    /// does nothing (false, and `rel` is freed); the table's reference is
    /// dropped after an RCU grace period, by `rel`'s work item.  Does not
    /// sleep or allocate (any context).
    pub(crate) fn remove(&self, index: u32, obj: &Arc<T>, rel: RcuRelease<T>) -> bool {
        let want = obj.clone().into_foreign();
        // SAFETY: `want` was produced by `into_foreign` just above.
        drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(want) });
        let old = self.with_lock(|xa| {
            // SAFETY: Valid xarray (type invariant), lock held; replaces the
            // entry with NULL only if it is `obj`'s (no allocation: GFP 0).
            unsafe { bindings::__xa_cmpxchg(xa, index as usize, want, core::ptr::null_mut(), 0) }
        });
        if old != want {
            return false;
        }
        // SAFETY: `old` was the table's entry for `obj`, produced by
        // `into_foreign` (type invariant) and no longer reachable from the
        // table.
        unsafe { self.release_after_grace_period(old, rel) };
        true
    }

    /// Removes whatever object is published at `index` (a reserved,
    /// unpublished index stays reserved); the table's reference is dropped
    /// after an RCU grace period, by `rel`'s work item.  For an index that
    /// only its caller's object may occupy (its registrations replace one
    /// another there).  False, and `rel` is freed, when the index held
    /// nothing.  Does not sleep or allocate (any context).
    pub(crate) fn erase(&self, index: u32, rel: RcuRelease<T>) -> bool {
        let old = self.with_lock(|xa| {
            // SAFETY: Valid xarray (type invariant).  `xa_load` reads under
            // RCU (it takes the read lock itself) and sees the zero entry of
            // a reservation as NULL.
            let cur = unsafe { bindings::xa_load(xa, index as usize) };
            if cur.is_null() {
                return cur;
            }
            // SAFETY: Valid xarray (type invariant), lock held, so `cur` is
            // still the entry (every change takes the lock): replaces it
            // with NULL (no allocation: GFP 0).
            unsafe { bindings::__xa_cmpxchg(xa, index as usize, cur, core::ptr::null_mut(), 0) }
        });
        if old.is_null() {
            return false;
        }
        // Not the zero entry, which `xa_load` returns as NULL.
        // SAFETY: `old` was a published entry of this table, produced by
        // `into_foreign` (type invariant), no longer reachable from it.
        unsafe { self.release_after_grace_period(old, rel) };
        true
    }

    /// Puts `new` at `index` in place of `old`, if `old` is the object
    /// there (else `new` comes back); the table's reference to `old` is
    /// dropped after an RCU grace period, by `rel`'s work item.  Does not
    /// sleep or allocate (any context).
    pub(crate) fn replace(
        &self,
        index: u32,
        old: &Arc<T>,
        new: Arc<T>,
        rel: RcuRelease<T>,
    ) -> core::result::Result<(), Arc<T>> {
        let want = old.clone().into_foreign();
        // SAFETY: `want` was produced by `into_foreign` just above.
        drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(want) });
        let p = new.into_foreign();
        let found = self.with_lock(|xa| {
            // INVARIANT: On success `p`, from `into_foreign`, is owned by
            // the table.
            // SAFETY: Valid xarray (type invariant), lock held; replaces the
            // entry with `p` only if it is `old`'s (an existing slot: no
            // allocation, GFP 0).
            unsafe { bindings::__xa_cmpxchg(xa, index as usize, want, p.cast(), 0) }
        });
        if found != want {
            // SAFETY: `p` came from `into_foreign` above and was not
            // stored: the reference comes back exactly once.
            return Err(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(p) });
        }
        // SAFETY: `found` was the table's entry for `old`, produced by
        // `into_foreign` (type invariant) and no longer reachable from the
        // table.
        unsafe { self.release_after_grace_period(found, rel) };
        Ok(())
    }

    /// Drops the table's former reference `entry` on the release queue,
    /// after an RCU grace period.
    ///
    /// # Safety
    ///
    /// `entry` was an entry of this table (from `Arc::into_foreign`) that
    /// no longer is: its reference is the caller's to give away, once.
    unsafe fn release_after_grace_period(&self, entry: *mut core::ffi::c_void, rel: RcuRelease<T>) {
        let mut cell = rel.0;
        // SAFETY: Per the function's contract, the reference moves into the
        // cell exactly once.
        cell.obj = Some(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(entry.cast()) });
        let rwork = cell.rwork.get();
        // SAFETY: `rwork` is the cell's own, not yet initialised or queued,
        // memory; `work` is its first field.
        let work = unsafe { core::ptr::addr_of_mut!((*rwork).work) };
        let key = kernel::static_lock_class!();
        // SAFETY: `work` is valid for writes (above); `release_cell::<T>`
        // takes a work item of a `ReleaseCell<T>`; the name and the key are
        // static.
        unsafe {
            bindings::init_work_with_key(
                work,
                Some(release_cell::<T>),
                false,
                c"rrxe_release".as_char_ptr(),
                key.as_ptr(),
            )
        };
        // INVARIANT: The cell leaves its `RcuRelease` holding the object,
        // its work item initialised; from here on the work item owns it.
        let cell = KBox::into_raw(cell);
        // SAFETY: The cell was leaked just above and its work item
        // initialised: it stays valid until `release_cell::<T>` frees it,
        // which the queue runs once.
        if !unsafe { RELEASES.queue_rcu_work(rwork) } {
            // No release queue: the module never started one or is past
            // its last device, so no table can be in use.  Keep the
            // object rather than free it under a reader.
            pr_err!("rrxe: object removed from a table without a release queue; leaked\n");
            let _ = cell;
        }
    }
}

impl<'a, T: Send + Sync + 'static> Reservation<'a, T> {
    /// The reserved index.
    pub(crate) fn index(&self) -> u32 {
        self.index
    }

    /// Publishes `obj` at the reserved index.
    pub(crate) fn publish(self, obj: Arc<T>) -> Result {
        let table = self.table;
        let index = self.index;
        core::mem::forget(self);
        let p = obj.into_foreign();
        let old = table.with_lock(|xa| {
            // INVARIANT: `p`, from `into_foreign`, is owned by the table
            // from here on, or taken back on failure.
            // SAFETY: Valid xarray (type invariant of `RcuTable`), lock
            // held; the slot is reserved for us, so storing replaces the
            // reservation marker.
            unsafe { bindings::__xa_store(xa, index as usize, p.cast(), bindings::GFP_KERNEL) }
        });
        // SAFETY: `xa_err` only decodes the returned entry.
        let err = unsafe { bindings::xa_err(old) };
        if err != 0 {
            // SAFETY: The store failed, so `p` was not stored: ours again.
            drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(p) });
            table.release(index);
            return Err(Error::from_errno(err));
        }
        Ok(())
    }
}

impl<T: Send + Sync + 'static> Drop for Reservation<'_, T> {
    fn drop(&mut self) {
        self.table.release(self.index);
    }
}

#[pinned_drop]
impl<T: Send + Sync + 'static> PinnedDrop for RcuTable<T> {
    fn drop(self: Pin<&mut Self>) {
        let mut index = 0usize;
        loop {
            // SAFETY: Valid xarray (type invariant); we are its only user
            // now.
            let p = unsafe {
                bindings::xa_find(self.raw(), &mut index, usize::MAX, bindings::XA_PRESENT)
            };
            let Some(p) = NonNull::new(p) else { break };
            // SAFETY: Valid xarray (type invariant); erases the entry we
            // found (no readers remain: the table is being dropped).
            unsafe { bindings::xa_erase(self.raw(), index) };
            // SAFETY: By the type invariant `p` came from `into_foreign`
            // (`xa_find` skips reserved slots, and reservations cannot
            // outlive the borrow of the table); it is now ours.
            drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(p.as_ptr().cast()) });
        }
        // SAFETY: Valid (type invariant), empty xarray, not used after
        // this.  Removals still on the release queue hold their objects,
        // not the table.
        unsafe { bindings::xa_destroy(self.raw()) };
    }
}

// rrxe runs these; the samples that compile kapi too (samples/rust,
// built with --cfg rrxe_sample) do not register them a second time.
#[cfg(not(rrxe_sample))]
#[kernel::macros::kunit_tests(rrxe_rcu_table)]
mod tests {
    use super::*;

    #[test]
    fn reserve_publish_get_remove() -> Result {
        let t = KBox::pin_init(RcuTable::<u32>::new(), GFP_KERNEL)?;
        let r = t.reserve(16, 17)?;
        let i = r.index();
        assert!((16..=17).contains(&i));
        // Reserved, not yet published: invisible.
        assert!(t.get(i).is_none());
        let obj = Arc::new(7u32, GFP_KERNEL)?;
        r.publish(obj.clone())?;
        assert_eq!(t.get(i).map(|o| *o), Some(7));
        // Removing another object at that index does nothing.
        let other = Arc::new(7u32, GFP_KERNEL)?;
        assert!(!t.remove(i, &other, RcuRelease::new(GFP_KERNEL)?));
        assert_eq!(t.get(i).map(|o| *o), Some(7));
        assert!(t.remove(i, &obj, RcuRelease::new(GFP_KERNEL)?));
        assert!(t.get(i).is_none());
        Ok(())
    }

    #[test]
    fn remove_in_atomic_context_drops_later() -> Result {
        let t = KBox::pin_init(RcuTable::<u32>::new(), GFP_KERNEL)?;
        let r = t.reserve_atomic(1, 4)?;
        let i = r.index();
        let obj = Arc::new(5u32, GFP_KERNEL)?;
        r.publish(obj.clone())?;
        let rel = RcuRelease::new(GFP_KERNEL)?;
        {
            // What a kernel consumer does under its spinlock.
            let _rcu = kernel::sync::rcu::read_lock();
            assert!(t.remove(i, &obj, rel));
        }
        assert!(t.get(i).is_none());
        // The index is free again at once.
        assert!(t.reserve_atomic(i, i).is_ok());
        // The table's reference goes after a grace period, on the release
        // queue: wait for the callback, then for the queue.
        // SAFETY: Plain call.
        unsafe { bindings::rcu_barrier() };
        // SAFETY: The module owns the release queue's guard and drops it
        // only at unload, after its KUnit cases ran.
        unsafe { RELEASES.flush() };
        assert!(Arc::into_unique_or_drop(obj).is_some());
        Ok(())
    }

    #[test]
    fn erase_whatever_is_published() -> Result {
        let t = KBox::pin_init(RcuTable::<u32>::new(), GFP_KERNEL)?;
        let slot = RcuReleaseSlot::<u32>::new(GFP_KERNEL)?;
        let r = t.reserve(1, 4)?;
        let i = r.index();
        // A reservation is not erased.
        assert!(!t.erase(i, RcuRelease::new(GFP_KERNEL)?));
        r.publish(Arc::new(3u32, GFP_KERNEL)?)?;
        let rel = slot.take().ok_or(EINVAL)?;
        // The slot gives its memory away once.
        assert!(slot.take().is_none());
        assert!(t.erase(i, rel));
        assert!(t.get(i).is_none());
        assert!(t.reserve(i, i).is_ok());
        // An unused slot frees its memory with it (kmemleak would tell).
        drop(RcuReleaseSlot::<u32>::new(GFP_KERNEL)?);
        Ok(())
    }

    #[test]
    fn full_range_and_dropped_reservations() -> Result {
        let t = KBox::pin_init(RcuTable::<u32>::new(), GFP_KERNEL)?;
        let a = t.reserve(1, 2)?;
        let b = t.reserve(1, 2)?;
        assert!(t.reserve(1, 2).is_err());
        let freed = b.index();
        drop(b);
        let c = t.reserve(1, 2)?;
        assert_eq!(c.index(), freed);
        a.publish(Arc::new(1u32, GFP_KERNEL)?)?;
        // The table drops what is still published with it.
        drop(c);
        Ok(())
    }
}

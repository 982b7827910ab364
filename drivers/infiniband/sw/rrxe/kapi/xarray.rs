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
//! * [`RcuTable::remove`] erases the entry and waits for an RCU grace
//!   period before it returns the table's reference, so a reader that
//!   found the entry has taken its own reference by then.  It may sleep.
//! * [`RcuTable::remove_nosleep`] erases the entry at once and drops the
//!   table's reference from an RCU callback after a grace period, for
//!   callers that may not sleep (a kernel consumer destroying an address
//!   handle under a spinlock).  The callback's memory ([`RcuRelease`]) is
//!   allocated beforehand, with the object, so removal allocates nothing;
//!   dropping the table waits for the callbacks (`rcu_barrier`).
//!   [`RcuTable::erase_nosleep`] does the same for whatever object is
//!   published at an index its caller owns (a memory region's index,
//!   which holds its current registration), and [`RcuReleaseSlot`] keeps
//!   the callback's memory in an object that is only shared, so that its
//!   destruction takes it without a lock and cannot fail.

use core::{marker::PhantomData, ptr::NonNull};
use kernel::{
    alloc::Flags,
    bindings,
    prelude::*,
    sync::{
        atomic::{Atomic, Full, Relaxed},
        Arc,
    },
    types::ForeignOwnable,
    types::Opaque,
};

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
    /// Set once [`RcuTable::remove_nosleep`] queued an RCU callback: the
    /// table's drop then waits for such callbacks.
    deferred: Atomic<bool>,
    _p: PhantomData<Arc<T>>,
}

/// Memory for the RCU callback that drops an entry removed by
/// [`RcuTable::remove_nosleep`], allocated ahead of time.
pub(crate) struct RcuRelease<T: Send + Sync + 'static>(KBox<ReleaseCell<T>>);

// SAFETY: The cell owns an `Arc<T>` (`T: Send + Sync`); its callback head
// is only written by `call_rcu`, after the cell has left the owner's hands.
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

// SAFETY: The slot owns at most one empty cell (invariant), which is as
// sendable as `RcuRelease<T>`.
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
        let p = NonNull::new(self.cell.xchg(core::ptr::null_mut(), Full))?;
        // SAFETY: A non-null `cell` owns a leaked `KBox` (invariant); the
        // exchange left null behind, so this caller alone takes it back.
        Some(RcuRelease(unsafe { KBox::from_raw(p.as_ptr()) }))
    }
}

impl<T: Send + Sync + 'static> Drop for RcuReleaseSlot<T> {
    fn drop(&mut self) {
        drop(self.take());
    }
}

/// What the RCU callback frees: the callback head first, so the callback
/// finds the cell from the head's address.
#[repr(C)]
struct ReleaseCell<T: Send + Sync + 'static> {
    head: Opaque<bindings::callback_head>,
    obj: Option<Arc<T>>,
}

impl<T: Send + Sync + 'static> RcuRelease<T> {
    /// Allocates the callback's memory with `flags`.
    pub(crate) fn new(flags: Flags) -> Result<Self> {
        Ok(Self(KBox::new(
            ReleaseCell {
                head: Opaque::uninit(),
                obj: None,
            },
            flags,
        )?))
    }
}

/// The RCU callback of [`RcuTable::remove_nosleep`]: frees the cell and
/// with it the table's former reference.
///
/// # Safety
///
/// `head` is the head of a `ReleaseCell<T>` leaked by `remove_nosleep`
/// (first field, `repr(C)`), handed to `call_rcu` once.
unsafe extern "C" fn release_cell<T: Send + Sync + 'static>(head: *mut bindings::callback_head) {
    // SAFETY: Per the function's contract the cell came from
    // `KBox::into_raw` and this is its only release.
    drop(unsafe { KBox::from_raw(head.cast::<ReleaseCell<T>>()) });
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
            deferred: Atomic::new(false),
            _p: PhantomData,
        })
    }

    fn raw(&self) -> *mut bindings::xarray {
        self.xa.get()
    }

    /// Runs `f` with the xarray's spinlock held (the `__xa_*` calls need
    /// it; they drop it only inside their own `GFP_KERNEL` allocations).
    fn with_lock<R>(&self, f: impl FnOnce(*mut bindings::xarray) -> R) -> R {
        // SAFETY: The xarray is initialised (invariant).
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
            // SAFETY: Valid xarray, lock held; replaces the zero entry and
            // nothing else.
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
            // SAFETY: Valid xarray, lock held: reserves a slot for the NULL
            // entry; `next` is only touched under this lock.
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
        // SAFETY: The xarray is valid; `xa_load` may be called under RCU.
        let p = unsafe { bindings::xa_load(self.raw(), index as usize) };
        let p = NonNull::new(p)?;
        // A non-NULL entry stays owned by the table until a grace period
        // after its removal (`remove` waits for one), which cannot end while
        // `_rcu` is held; the borrow becomes a new reference before that.
        // SAFETY: The entry came from `Arc::into_foreign` (invariant) and
        // is alive (above).
        let borrowed = unsafe { <Arc<T> as ForeignOwnable>::borrow(p.as_ptr().cast()) };
        Some(borrowed.into())
    }

    /// Removes `obj` from `index` if it is the object there, waits for
    /// concurrent RCU readers, and returns the table's reference.  May
    /// sleep.
    pub(crate) fn remove(&self, index: u32, obj: &Arc<T>) -> Option<Arc<T>> {
        // The entry is the foreign form of `obj` (its `ArcInner`, not the
        // data pointer): produce it from a clone, then take that back.
        let want = obj.clone().into_foreign();
        // SAFETY: `want` was produced by `into_foreign` just above.
        drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(want) });
        let old = self.with_lock(|xa| {
            // SAFETY: Valid xarray, lock held; replaces the entry with NULL
            // only if it is `obj`'s (no allocation: GFP 0).
            unsafe { bindings::__xa_cmpxchg(xa, index as usize, want, core::ptr::null_mut(), 0) }
        });
        if old != want {
            return None;
        }
        // SAFETY: Plain call: waits until readers that may have loaded the
        // entry have left their RCU read-side sections.
        unsafe { bindings::synchronize_rcu() };
        // SAFETY: `old` was the table's entry for `obj`, produced by
        // `into_foreign`; it is no longer reachable from the table, so its
        // reference moves to the caller exactly once.
        Some(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(old.cast()) })
    }

    /// Removes `obj` from `index` if it is the object there; the table's
    /// reference is dropped after an RCU grace period, from `rel`'s
    /// callback.  Does not sleep or allocate (any context).
    pub(crate) fn remove_nosleep(&self, index: u32, obj: &Arc<T>, rel: RcuRelease<T>) {
        let want = obj.clone().into_foreign();
        // SAFETY: `want` was produced by `into_foreign` just above.
        drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(want) });
        let old = self.with_lock(|xa| {
            // SAFETY: Valid xarray, lock held; replaces the entry with NULL
            // only if it is `obj`'s (no allocation: GFP 0).
            unsafe { bindings::__xa_cmpxchg(xa, index as usize, want, core::ptr::null_mut(), 0) }
        });
        if old != want {
            return;
        }
        // SAFETY: `old` was the table's entry for `obj`, produced by
        // `into_foreign` and no longer reachable from the table.
        unsafe { self.release_after_grace_period(old, rel) };
    }

    /// Removes whatever object is published at `index` (a reserved,
    /// unpublished index stays reserved); the table's reference is dropped
    /// after an RCU grace period, from `rel`'s callback.  For an index that
    /// only its caller's object may occupy (its registrations replace one
    /// another there).  False, and `rel` is freed, when the index held
    /// nothing.  Does not sleep or allocate (any context).
    pub(crate) fn erase_nosleep(&self, index: u32, rel: RcuRelease<T>) -> bool {
        let old = self.with_lock(|xa| {
            // SAFETY: Valid xarray.  `xa_load` reads under RCU (it takes
            // the read lock itself) and sees the zero entry of a
            // reservation as NULL.
            let cur = unsafe { bindings::xa_load(xa, index as usize) };
            if cur.is_null() {
                return cur;
            }
            // SAFETY: Valid xarray, lock held, so `cur` is still the entry
            // (every change takes the lock): replaces it with NULL (no
            // allocation: GFP 0).
            unsafe { bindings::__xa_cmpxchg(xa, index as usize, cur, core::ptr::null_mut(), 0) }
        });
        if old.is_null() {
            return false;
        }
        // SAFETY: `old` was a published entry of this table (not the zero
        // entry, which `xa_load` returns as NULL), produced by
        // `into_foreign` and no longer reachable from the table.
        unsafe { self.release_after_grace_period(old, rel) };
        true
    }

    /// Puts `new` at `index` in place of `old`, if `old` is the object
    /// there (else `new` comes back); the table's reference to `old` is
    /// dropped after an RCU grace period, from `rel`'s callback.  Does not
    /// sleep or allocate (any context).
    pub(crate) fn replace_nosleep(
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
            // SAFETY: Valid xarray, lock held; replaces the entry with `p`
            // only if it is `old`'s (an existing slot: no allocation, GFP
            // 0).  On success `p` is owned by the table (invariant).
            unsafe { bindings::__xa_cmpxchg(xa, index as usize, want, p.cast(), 0) }
        });
        if found != want {
            // SAFETY: `p` came from `into_foreign` above and was not
            // stored: the reference comes back exactly once.
            return Err(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(p) });
        }
        // SAFETY: `found` was the table's entry for `old`, produced by
        // `into_foreign` and no longer reachable from the table.
        unsafe { self.release_after_grace_period(found, rel) };
        Ok(())
    }

    /// Drops the table's former reference `entry` from an RCU callback.
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
        self.deferred.store(true, Relaxed);
        let cell = KBox::into_raw(cell);
        // SAFETY: `cell` is a live allocation leaked just above; its head
        // is handed to `call_rcu` once, and `release_cell::<T>` takes the
        // cell back after readers that may have found the entry are done.
        unsafe { bindings::call_rcu((*cell).head.get(), Some(release_cell::<T>)) };
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
            // SAFETY: Valid xarray, lock held; the slot is reserved for us,
            // so storing replaces the reservation marker; `p` is owned by
            // the table from here on (invariant), or taken back on failure.
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
            // SAFETY: Valid xarray; we are its only user now.
            let p = unsafe {
                bindings::xa_find(self.raw(), &mut index, usize::MAX, bindings::XA_PRESENT)
            };
            let Some(p) = NonNull::new(p) else { break };
            // SAFETY: Valid xarray; erases the entry we found (no readers
            // remain: the table is being dropped).
            unsafe { bindings::xa_erase(self.raw(), index) };
            // SAFETY: `p` came from `into_foreign` (reservations cannot
            // outlive the borrow of the table) and is now ours.
            drop(unsafe { <Arc<T> as ForeignOwnable>::from_foreign(p.as_ptr().cast()) });
        }
        // SAFETY: Valid, empty xarray, not used after this.
        unsafe { bindings::xa_destroy(self.raw()) };
        if self.deferred.load(Relaxed) {
            // SAFETY: Plain call (process context, as every table drop):
            // waits until the callbacks queued by `remove_nosleep` have
            // run, so none runs after the module that queued it is gone.
            unsafe { bindings::rcu_barrier() };
        }
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
        assert!(t.remove(i, &other).is_none());
        assert!(t.remove(i, &obj).is_some());
        assert!(t.get(i).is_none());
        Ok(())
    }

    #[test]
    fn remove_without_sleeping() -> Result {
        let t = KBox::pin_init(RcuTable::<u32>::new(), GFP_KERNEL)?;
        let r = t.reserve_atomic(1, 4)?;
        let i = r.index();
        let obj = Arc::new(5u32, GFP_KERNEL)?;
        r.publish(obj.clone())?;
        let other = Arc::new(5u32, GFP_KERNEL)?;
        t.remove_nosleep(i, &other, RcuRelease::new(GFP_ATOMIC)?);
        assert_eq!(t.get(i).map(|o| *o), Some(5));
        t.remove_nosleep(i, &obj, RcuRelease::new(GFP_ATOMIC)?);
        assert!(t.get(i).is_none());
        // The index is free again.
        assert!(t.reserve_atomic(i, i).is_ok());
        // Dropping the table waits for the RCU callback.
        Ok(())
    }

    #[test]
    fn erase_whatever_is_published() -> Result {
        let t = KBox::pin_init(RcuTable::<u32>::new(), GFP_KERNEL)?;
        let slot = RcuReleaseSlot::<u32>::new(GFP_KERNEL)?;
        let r = t.reserve(1, 4)?;
        let i = r.index();
        // A reservation is not erased.
        assert!(!t.erase_nosleep(i, RcuRelease::new(GFP_KERNEL)?));
        r.publish(Arc::new(3u32, GFP_KERNEL)?)?;
        let rel = slot.take().ok_or(EINVAL)?;
        // The slot gives its memory away once.
        assert!(slot.take().is_none());
        assert!(t.erase_nosleep(i, rel));
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

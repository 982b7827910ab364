// SPDX-License-Identifier: GPL-2.0

//! Index tables: numbered objects (MR keys, QP numbers) in a kernel XArray,
//! shared as `Arc`s so that a lookup on the data path keeps the object alive
//! while a concurrent destroy removes it from the table.
//!
//! Locking: the XArray's spinlock is held only to look up, store or remove
//! (never to allocate or construct an object: both may sleep).  Insertions
//! are serialised by a mutex, so a free index found under the spinlock is
//! still free when the object made for it is stored.

use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
    xarray::{AllocKind, XArray},
};

/// Objects numbered `first ..= last`.
#[pin_data]
pub(crate) struct IndexTable<T: Send + Sync + 'static> {
    #[pin]
    xa: XArray<Arc<T>>,
    /// Held across an insertion (see the module docs).
    #[pin]
    inserting: Mutex<()>,
    /// Allocation counter: where the next search starts.
    next: AtomicU32,
    first: u32,
    last: u32,
}

impl<T: Send + Sync + 'static> IndexTable<T> {
    /// An empty table for indices `first ..= last` (`first >= 1`).
    pub(crate) fn new(first: u32, last: u32) -> impl PinInit<Self> {
        pin_init!(Self {
            xa <- XArray::new(AllocKind::Alloc1),
            inserting <- new_mutex!(()),
            next: AtomicU32::new(0),
            first,
            last,
        })
    }

    /// Stores the object `make(index, counter)` initialises at a free index,
    /// searching round-robin from the last allocation; `ENOMEM` when full.
    /// `counter` grows with every allocation (for key generations).
    /// May sleep.
    pub(crate) fn insert<I: PinInit<T, Error>>(&self, make: impl FnOnce(u32, u32) -> I) -> Result<Arc<T>> {
        let _serial = self.inserting.lock();
        let (idx, n) = self.find_free().ok_or(ENOMEM)?;
        // Not under the spinlock: construction allocates.
        let obj = Arc::pin_init(make(idx, n), GFP_KERNEL)?;
        // `__xa_store` drops the spinlock around its own GFP_KERNEL
        // node allocations.  `idx` is still free: only insertions fill
        // slots, and they are serialised by `inserting`.
        self.xa.lock().store(idx as usize, obj.clone(), GFP_KERNEL).map_err(|e| e.error)?;
        Ok(obj)
    }

    /// A free index and the allocation counter that found it, searching
    /// round-robin from the last allocation; `None` when full.
    fn find_free(&self) -> Option<(u32, u32)> {
        let span = self.last - self.first + 1;
        let guard = self.xa.lock();
        (0..span).find_map(|_| {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            let idx = self.first + n % span;
            guard.get(idx as usize).is_none().then_some((idx, n))
        })
    }

    /// The object at `idx` if `pred` accepts it.
    pub(crate) fn get_if(&self, idx: u32, pred: impl FnOnce(&T) -> bool) -> Option<Arc<T>> {
        let guard = self.xa.lock();
        let obj = guard.get(idx as usize)?;
        pred(&obj).then(|| obj.into())
    }

    /// Removes `obj` from `idx` if it is still the one stored there.
    pub(crate) fn remove(&self, idx: u32, obj: &Arc<T>) {
        let mut guard = self.xa.lock();
        let same = guard.get(idx as usize).is_some_and(|o| core::ptr::eq(&*o, &**obj));
        if same {
            drop(guard.remove(idx as usize));
        }
    }
}

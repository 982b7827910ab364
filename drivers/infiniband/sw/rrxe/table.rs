// SPDX-License-Identifier: GPL-2.0

//! Index tables: numbered objects (MR keys, QP numbers) in a kernel XArray,
//! shared as `Arc`s so that a lookup on the data path keeps the object alive
//! while a concurrent destroy removes it from the table.

use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{prelude::*, sync::Arc, xarray::{AllocKind, XArray}};

/// Objects numbered `first ..= last`.
#[pin_data]
pub(crate) struct IndexTable<T: Send + Sync + 'static> {
    #[pin]
    xa: XArray<Arc<T>>,
    /// Allocation counter: where the next search starts.
    next: AtomicU32,
    first: u32,
    last: u32,
}

impl<T: Send + Sync + 'static> IndexTable<T> {
    /// An empty table for indices `first ..= last` (`first >= 1`).
    pub(crate) fn new(first: u32, last: u32) -> impl PinInit<Self> {
        pin_init!(Self { xa <- XArray::new(AllocKind::Alloc1), next: AtomicU32::new(0), first, last })
    }

    /// Stores the object `make(index, counter)` initialises at a free index,
    /// searching round-robin from the last allocation; `ENOMEM` when full.
    /// `counter` grows with every allocation (for key generations).
    pub(crate) fn insert<I: PinInit<T, Error>>(&self, make: impl FnOnce(u32, u32) -> I) -> Result<Arc<T>> {
        let span = self.last - self.first + 1;
        let mut guard = self.xa.lock();
        for _ in 0..span {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            let idx = self.first + n % span;
            if guard.get(idx as usize).is_some() {
                continue;
            }
            let obj = Arc::pin_init(make(idx, n), GFP_KERNEL)?;
            guard.store(idx as usize, obj.clone(), GFP_KERNEL).map_err(|e| e.error)?;
            return Ok(obj);
        }
        Err(ENOMEM)
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

// SPDX-License-Identifier: GPL-2.0

//! Kernel memory shared with user space through `mmap` on the uverbs file:
//! a zeroed `vmalloc_user` area registered as an rdma user mmap entry, the
//! way librxe maps its queues (the driver returns the entry's offset and
//! size, user space maps them).
//!
//! Lifetime: user mappings may outlive the kernel object that created the
//! area (a process can keep a CQ ring mapped after destroying the CQ), so
//! the area belongs to the mmap entry.  [`UserMapping`] drops only the
//! kernel's reference (`rdma_user_mmap_entry_remove`); ib_core calls
//! `mmap_free` once the last mapping is gone, which frees the area.  Kernel
//! accesses go through atomics, since user space writes the same memory.

use core::{
    ptr::NonNull,
    sync::atomic::{AtomicU32, Ordering},
};
use kernel::{bindings, error::to_result, prelude::*, types::Opaque};

/// The driver's mmap entry: ib_core's entry plus the area it maps.
#[repr(C)]
struct Entry {
    entry: Opaque<bindings::rdma_user_mmap_entry>,
    area: NonNull<u8>,
    len: usize,
}

/// A user context (`struct ib_ucontext`), borrowed for a verb call.
pub(crate) struct UserContext<'a> {
    raw: &'a Opaque<bindings::ib_ucontext>,
}

impl<'a> UserContext<'a> {
    /// # Safety
    ///
    /// `raw` must point to a live user context for `'a`.
    pub(crate) unsafe fn from_raw(raw: *mut bindings::ib_ucontext) -> Self {
        // SAFETY: Per the function's contract; `Opaque` is transparent.
        Self {
            raw: unsafe { &*raw.cast() },
        }
    }
}

/// A user-mappable area registered with a user context; see the module
/// docs.
pub(crate) struct UserMapping {
    entry: NonNull<Entry>,
}

// SAFETY: The area is only accessed through atomics; ib_core's entry is
// thread-safe.
unsafe impl Send for UserMapping {}
// SAFETY: See above.
unsafe impl Sync for UserMapping {}

const PAGE_SIZE: usize = 1 << bindings::PAGE_SHIFT;

impl UserMapping {
    /// Allocates `len` zeroed bytes (rounded up to pages) and makes them
    /// mappable in `uctx`.
    pub(crate) fn new(uctx: &UserContext<'_>, len: usize) -> Result<Self> {
        let pages = len.checked_next_multiple_of(PAGE_SIZE).ok_or(EINVAL)?;
        // SAFETY: Plain allocation; the result is zeroed, page aligned and
        // flagged VM_USERMAP, or null.
        let area = NonNull::new(
            unsafe { bindings::vmalloc_user(pages as kernel::ffi::c_ulong) }.cast::<u8>(),
        )
        .ok_or(ENOMEM)?;
        let entry = KBox::new(
            Entry {
                // SAFETY: All-zeroes is the state ib_core expects before
                // `rdma_user_mmap_entry_insert`.
                entry: Opaque::new(unsafe { core::mem::zeroed() }),
                area,
                len,
            },
            GFP_KERNEL,
        );
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                // SAFETY: `area` came from `vmalloc_user` and is unshared.
                unsafe { bindings::vfree(area.as_ptr().cast()) };
                return Err(e.into());
            }
        };
        let entry = NonNull::from(KBox::leak(entry));
        // SAFETY: `uctx` is live; the entry is zeroed and stays at this
        // address until `mmap_free` frees it.
        let ret = unsafe {
            bindings::rdma_user_mmap_entry_insert(
                uctx.raw.get(),
                (*entry.as_ptr()).entry.get(),
                pages,
            )
        };
        if let Err(e) = to_result(ret) {
            // SAFETY: Insertion failed, so ib_core never saw the entry.
            unsafe { free_entry(entry) };
            return Err(e);
        }
        Ok(Self { entry })
    }

    fn entry(&self) -> &Entry {
        // SAFETY: The kernel reference we hold keeps the entry alive.
        unsafe { self.entry.as_ref() }
    }

    /// The `mmap` offset user space must pass for this area.
    pub(crate) fn offset(&self) -> u64 {
        // SAFETY: `start_pgoff` is set at insertion and never changes.
        let pgoff = unsafe { (*self.entry().entry.get()).start_pgoff };
        (pgoff as u64) << bindings::PAGE_SHIFT
    }

    /// Usable length in bytes (as requested, before page rounding).
    pub(crate) fn len(&self) -> usize {
        self.entry().len
    }

    /// The 32-bit word at byte offset `off` (4-byte aligned, in bounds).
    pub(crate) fn word(&self, off: usize) -> Result<&AtomicU32> {
        if off % 4 != 0 || off.checked_add(4).is_none_or(|end| end > self.len()) {
            return Err(EINVAL);
        }
        // SAFETY: In bounds and aligned (the area is page aligned); the area
        // lives as long as `self`, and every access to it is atomic.
        Ok(unsafe { AtomicU32::from_ptr(self.entry().area.as_ptr().add(off).cast()) })
    }

    /// Stores `v` at word offset `off` with release ordering.
    pub(crate) fn store(&self, off: usize, v: u32) -> Result {
        self.word(off)?.store(v, Ordering::Release);
        Ok(())
    }

    /// Copies `dst.len()` bytes (a multiple of 4) from word-aligned offset
    /// `off`, word by word (user space may be writing concurrently; each
    /// word is read once, so the copy is a snapshot the caller validates).
    pub(crate) fn read_bytes(&self, off: usize, dst: &mut [u8]) -> Result {
        if dst.len() % 4 != 0 {
            return Err(EINVAL);
        }
        for (i, chunk) in dst.chunks_exact_mut(4).enumerate() {
            let w = self.word(off + 4 * i)?.load(Ordering::Relaxed);
            chunk.copy_from_slice(&w.to_ne_bytes());
        }
        Ok(())
    }

    /// Writes `src` (a multiple of 4 bytes) at word-aligned offset `off`.
    pub(crate) fn write_bytes(&self, off: usize, src: &[u8]) -> Result {
        if src.len() % 4 != 0 {
            return Err(EINVAL);
        }
        for (i, chunk) in src.chunks_exact(4).enumerate() {
            let w = u32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            self.word(off + 4 * i)?.store(w, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Loads the word at `off` with acquire ordering.
    pub(crate) fn load(&self, off: usize) -> Result<u32> {
        Ok(self.word(off)?.load(Ordering::Acquire))
    }
}

impl Drop for UserMapping {
    fn drop(&mut self) {
        // SAFETY: Drops the kernel's reference; ib_core frees the entry via
        // `mmap_free` when no mapping is left.  We never touch it again.
        unsafe { bindings::rdma_user_mmap_entry_remove((*self.entry.as_ptr()).entry.get()) };
    }
}

/// Frees an entry and its area.
///
/// # Safety
///
/// `entry` came from `UserMapping::new` and nothing references it any more.
unsafe fn free_entry(entry: NonNull<Entry>) {
    // SAFETY: Per the function's contract, we own both allocations.
    unsafe {
        bindings::vfree(entry.as_ref().area.as_ptr().cast());
        drop(KBox::from_raw(entry.as_ptr()));
    }
}

/// `ops.mmap`: maps the entry `vma` names.
///
/// # Safety
///
/// Only called by ib_core with a live user context and vma.
pub(super) unsafe extern "C" fn mmap(
    uctx: *mut bindings::ib_ucontext,
    vma: *mut bindings::vm_area_struct,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core's contract for `mmap`; the entry returned (if any) is
    // referenced until the put below, and all entries of this driver are
    // `Entry`s (ib_core's entry is their first field).
    unsafe {
        let e = bindings::rdma_user_mmap_entry_get(uctx, vma);
        if e.is_null() {
            return -(bindings::EINVAL as i32);
        }
        let ours = e.cast::<Entry>();
        let ret = bindings::remap_vmalloc_range(vma, (*ours).area.as_ptr().cast(), 0);
        bindings::rdma_user_mmap_entry_put(e);
        ret
    }
}

/// `ops.mmap_free`: the last reference to an entry is gone.
///
/// # Safety
///
/// Only called by ib_core, once per entry, after every mapping is closed.
pub(super) unsafe extern "C" fn mmap_free(e: *mut bindings::rdma_user_mmap_entry) {
    // SAFETY: All entries of this driver are `Entry`s made by
    // `UserMapping::new`; ib_core hands back the last reference.
    unsafe { free_entry(NonNull::new_unchecked(e.cast::<Entry>())) };
}

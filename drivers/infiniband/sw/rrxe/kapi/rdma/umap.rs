// SPDX-License-Identifier: GPL-2.0

//! Kernel memory shared with user space through `mmap` on the uverbs file:
//! a zeroed `vmalloc_user` area registered as an rdma user mmap entry, the
//! way librxe maps its queues (the driver returns the entry's offset and
//! size, user space maps them).
//!
//! Lifetime: the area belongs to the mmap entry, which is referenced by
//! the kernel object that created it ([`UserMapping`]) and by every user
//! mapping of it (`rdma_user_mmap_vmalloc`, patches/0006, tracks each VMA
//! the way `rdma_user_mmap_io` does, and its close drops the reference).
//! ib_core calls `mmap_free`, which frees the area, when the last of them
//! is gone.  So:
//!
//! * after the object is destroyed, a process that still maps its ring
//!   keeps the memory (the kernel never reads or writes it again) until it
//!   unmaps it, as with C rxe;
//! * when the device is disassociated (`rdma link delete`, netdev removal,
//!   rmmod with the device open), ib_core zaps every tracked mapping and
//!   drops its reference, so the areas are freed then: the process's later
//!   accesses to the mapping read zeroes (a dummy page), they do not fault;
//! * entries are always freed before their user context, which ib_core
//!   destroys only after the disassociation or the last close of the file
//!   (a mapping holds the file).
//!
//! Areas are charged to the caller's memory cgroup (`GFP_KERNEL_ACCOUNT`)
//! and to a per-context total that the driver caps (`ENOMEM` beyond it).
//! Kernel accesses go through atomics, since user space writes the same
//! memory.

use core::{
    ptr::NonNull,
    sync::atomic::{AtomicUsize, Ordering},
};
use kernel::{bindings, error::to_result, prelude::*, types::Opaque};

use crate::kapi::words::Words;

/// The driver's mmap entry: ib_core's entry plus the area it maps and the
/// context it is charged to.
///
/// # Invariants
///
/// Made by [`UserMapping::new`] as a leaked `KBox`, which `free_entry`
/// takes back once: when its insertion failed, or from `mmap_free` after
/// ib_core dropped its last reference.  `entry` is the
/// `rdma_user_mmap_entry` ib_core knows it by (its first field).  `area` is
/// a zeroed, page-aligned `vmalloc_user` area of `charged` bytes (`len`
/// rounded up to pages), owned by the entry and freed with it; the kernel
/// accesses it only through [`Words`].  `ctx` is the [`ContextObj`] the
/// area is charged to, which outlives the entry (ib_core frees every entry
/// of a context before the context: module docs).
#[repr(C)]
struct Entry {
    entry: Opaque<bindings::rdma_user_mmap_entry>,
    area: NonNull<u8>,
    len: usize,
    /// Bytes charged to `ctx` (the area, page-rounded).
    charged: usize,
    /// The context charged (see the type invariants: it outlives the
    /// entry).
    ctx: NonNull<ContextObj>,
}

/// The user context as ib_core allocates it for this driver
/// (`size_ib_ucontext`, zeroed): ib_core's object, then the bytes of queue
/// memory charged to it.
///
/// # Invariants
///
/// Never made in Rust: ib_core allocates it for every user context of a
/// device with these ops (so `queue_bytes` starts at 0) and frees it only
/// after every mmap entry of the context (module docs); `ib` is the
/// `ib_ucontext` it passes to the verbs.  `queue_bytes` is the sum of the
/// `charged` bytes of the context's live entries, plus charges in
/// progress.
#[repr(C)]
pub(super) struct ContextObj {
    ib: Opaque<bindings::ib_ucontext>,
    queue_bytes: AtomicUsize,
}

/// A user context (`struct ib_ucontext`), borrowed for a verb call.
///
/// # Invariants
///
/// `obj` is the [`ContextObj`] of a live user context of a device with
/// these ops, live for `'a`.
pub(crate) struct UserContext<'a> {
    obj: &'a ContextObj,
}

impl<'a> UserContext<'a> {
    /// # Safety
    ///
    /// `raw` must point to a live user context of a device using this
    /// module's ops (so a [`ContextObj`]) for `'a`.
    pub(crate) unsafe fn from_raw(raw: *mut bindings::ib_ucontext) -> Self {
        // SAFETY: Per the function's contract, `raw` is the first field of
        // a live `ContextObj` (`repr(C)`).
        let obj = unsafe { &*raw.cast::<ContextObj>() };
        // INVARIANT: Per the function's safety requirements.
        Self { obj }
    }

    fn raw(&self) -> *mut bindings::ib_ucontext {
        self.obj.ib.get()
    }

    /// Charges `bytes` to the context unless its total would pass `limit`
    /// (`ENOMEM` then, nothing charged).
    fn charge(&self, bytes: usize, limit: usize) -> Result {
        let total = &self.obj.queue_bytes;
        let mut cur = total.load(Ordering::Relaxed);
        loop {
            let next = cur
                .checked_add(bytes)
                .filter(|n| *n <= limit)
                .ok_or(ENOMEM)?;
            match total.compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Ok(()),
                Err(now) => cur = now,
            }
        }
    }
}

/// Returns `bytes` charged to `ctx`.
fn uncharge(ctx: &ContextObj, bytes: usize) {
    ctx.queue_bytes.fetch_sub(bytes, Ordering::Relaxed);
}

/// A user-mappable area registered with a user context; see the module
/// docs.
///
/// # Invariants
///
/// `entry` is an [`Entry`] inserted in its context's mmap table
/// (`rdma_user_mmap_entry_insert`), on which `self` holds the kernel's
/// reference, given back only by its drop (`rdma_user_mmap_entry_remove`).
/// While that reference is held the entry, and with it the area, lives.
pub(crate) struct UserMapping {
    entry: NonNull<Entry>,
}

// SAFETY: The area is only accessed through atomics (type invariant of
// `Entry`); ib_core's entry is thread-safe.
unsafe impl Send for UserMapping {}
// SAFETY: The area is only accessed through atomics and ib_core's entry
// is thread-safe, so shared references may cross threads.
unsafe impl Sync for UserMapping {}

const PAGE_SIZE: usize = 1 << bindings::PAGE_SHIFT;

impl UserMapping {
    /// Allocates `len` zeroed bytes (rounded up to pages) and makes them
    /// mappable in `uctx`; `ENOMEM` if the context's queues would then
    /// hold more than `limit` bytes.
    pub(crate) fn new(uctx: &UserContext<'_>, len: usize, limit: usize) -> Result<Self> {
        let pages = len.checked_next_multiple_of(PAGE_SIZE).ok_or(EINVAL)?;
        uctx.charge(pages, limit)?;
        // SAFETY: Plain allocation; the result is zeroed, page aligned and
        // flagged VM_USERMAP, or null.
        let area = unsafe { bindings::vmalloc_user_account(pages as kernel::ffi::c_ulong) };
        let Some(area) = NonNull::new(area.cast::<u8>()) else {
            uncharge(uctx.obj, pages);
            return Err(ENOMEM);
        };
        // INVARIANT: `area` is the fresh allocation of `pages` bytes,
        // charged to `uctx` above; the entry, leaked below, owns it.
        let entry = KBox::new(
            Entry {
                // SAFETY: All-zeroes is the state ib_core expects before
                // `rdma_user_mmap_entry_insert`.
                entry: Opaque::new(unsafe { core::mem::zeroed() }),
                area,
                len,
                charged: pages,
                // INVARIANT: ib_core frees every entry of a context before
                // the context (module docs).
                ctx: NonNull::from(uctx.obj),
            },
            GFP_KERNEL,
        );
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                // SAFETY: `area` came from `vmalloc_user_account` and is
                // unshared.
                unsafe { bindings::vfree(area.as_ptr().cast()) };
                uncharge(uctx.obj, pages);
                return Err(e.into());
            }
        };
        let entry = NonNull::from(KBox::leak(entry));
        // SAFETY: `uctx` is live (type invariant of `UserContext`); the
        // entry is zeroed and stays at this address until `mmap_free` frees
        // it.
        let ret = unsafe {
            bindings::rdma_user_mmap_entry_insert(uctx.raw(), (*entry.as_ptr()).entry.get(), pages)
        };
        if let Err(e) = to_result(ret) {
            // SAFETY: Insertion failed, so ib_core never saw the entry.
            unsafe { free_entry(entry) };
            return Err(e);
        }
        // INVARIANT: The entry is inserted; the reference the insertion
        // made is the kernel's, now ours.
        Ok(Self { entry })
    }

    fn entry(&self) -> &Entry {
        // SAFETY: The kernel reference we hold (type invariant) keeps the
        // entry alive.
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

    /// The area's words (user space writes them too).
    pub(crate) fn words(&self) -> Words<'_> {
        // The area lives as long as `self` (our reference on the entry);
        // the kernel accesses it only through `Words`.
        // SAFETY: By the type invariants of `Entry` and `UserMapping`, the
        // area is page aligned and at least `len` bytes long.
        unsafe { Words::new(self.entry().area, self.len()) }
    }
}

impl Drop for UserMapping {
    fn drop(&mut self) {
        // SAFETY: Drops the kernel's reference (type invariant), once;
        // ib_core frees the entry via `mmap_free` when no mapping is left.
        // We never touch it again.
        unsafe { bindings::rdma_user_mmap_entry_remove((*self.entry.as_ptr()).entry.get()) };
    }
}

/// Frees an entry and its area, and returns its charge to the context.
///
/// # Safety
///
/// `entry` came from `UserMapping::new` and nothing references it any more.
unsafe fn free_entry(entry: NonNull<Entry>) {
    // SAFETY: Per the function's contract and the type invariant of
    // `Entry`, we own the entry, allocated by `KBox` in `UserMapping::new`.
    let e = unsafe { KBox::from_raw(entry.as_ptr()) };
    // SAFETY: The area came from `vmalloc_user_account` and is owned by
    // the entry (type invariant); no mapping or kernel object uses it any
    // more.
    unsafe { bindings::vfree(e.area.as_ptr().cast()) };
    // SAFETY: By the type invariant of `Entry`, the context is still
    // alive.
    uncharge(unsafe { e.ctx.as_ref() }, e.charged);
}

/// `ops.mmap`: maps the entry `vma` names, for as long as the mapping
/// lives or until disassociation (module docs).
///
/// # Safety
///
/// Only called by ib_core (`ib_uverbs_mmap`) with a live user context and
/// vma.
pub(super) unsafe extern "C" fn mmap(
    uctx: *mut bindings::ib_ucontext,
    vma: *mut bindings::vm_area_struct,
) -> kernel::ffi::c_int {
    // SAFETY: ib_core's contract for `mmap`.  The call checks that the vma
    // is shared and exactly as large as the entry it names, and takes a
    // reference on that entry.
    let e = unsafe { bindings::rdma_user_mmap_entry_get(uctx, vma) };
    if e.is_null() {
        return -(bindings::EINVAL as i32);
    }
    // SAFETY: All entries of this driver are `Entry`s (ib_core's entry is
    // their first field, type invariant); ours is referenced.
    let area = unsafe { (*e.cast::<Entry>()).area };
    // SAFETY: Called from `ib_uverbs_mmap` (its SRCU and file checks hold);
    // `area` is a VM_USERMAP area of the entry's size, which equals the
    // vma's.  The mapping takes its own reference on the entry.
    let ret = unsafe { bindings::rdma_user_mmap_vmalloc(uctx, vma, area.as_ptr().cast(), e) };
    // SAFETY: Drops the reference taken by the get above.
    unsafe { bindings::rdma_user_mmap_entry_put(e) };
    ret
}

/// `ops.mmap_free`: the last reference to an entry is gone.
///
/// # Safety
///
/// Only called by ib_core, once per entry, after every mapping is closed.
pub(super) unsafe extern "C" fn mmap_free(e: *mut bindings::rdma_user_mmap_entry) {
    // SAFETY: All entries of this driver are `Entry`s made by
    // `UserMapping::new` (type invariant of `Entry`); ib_core hands back the
    // last reference.
    unsafe { free_entry(NonNull::new_unchecked(e.cast::<Entry>())) };
}

// SPDX-License-Identifier: GPL-2.0

//! Word-atomic access to memory that another party writes concurrently:
//! a ring shared with user space, or a kernel consumer's ring that the
//! engine reads while `post_send` writes it.  Every access is a 32-bit
//! atomic, so a concurrent writer can make a copy inconsistent (which the
//! reader validates) but never a data race.  [`KernelArea`] owns such
//! memory for a kernel consumer (`vzalloc`, freed with `vfree` on drop).

use core::{
    marker::PhantomData,
    ptr::NonNull,
    sync::atomic::{AtomicU32, Ordering},
};
use kernel::prelude::*;

/// A borrowed view of `len` bytes of such memory.
///
/// # Invariants
///
/// `base` is 4-byte aligned and valid for reads and writes of `len` bytes
/// for `'a`, and every access to that memory from the kernel is atomic
/// (other parties may write it at any time).
pub(crate) struct Words<'a> {
    base: NonNull<u8>,
    len: usize,
    _area: PhantomData<&'a [AtomicU32]>,
}

impl<'a> Words<'a> {
    /// # Safety
    ///
    /// `base` is 4-byte aligned and valid for reads and writes of `len`
    /// bytes for `'a`, and every access to that memory from the kernel is
    /// atomic (other parties may write it at any time).
    pub(crate) unsafe fn new(base: NonNull<u8>, len: usize) -> Self {
        // INVARIANT: The function's safety requirements are the invariants.
        Self {
            base,
            len,
            _area: PhantomData,
        }
    }

    /// The 32-bit word at byte offset `off` (4-byte aligned, in bounds).
    pub(crate) fn word(&self, off: usize) -> Result<&'a AtomicU32> {
        if off % 4 != 0 || off.checked_add(4).is_none_or(|end| end > self.len) {
            return Err(EINVAL);
        }
        // SAFETY: In bounds and aligned (checked above; `base` is aligned by
        // the type invariant); by the type invariant the memory is valid for
        // `'a` and only accessed atomically.
        Ok(unsafe { AtomicU32::from_ptr(self.base.as_ptr().add(off).cast()) })
    }

    /// Stores `v` at word offset `off` with release ordering.
    pub(crate) fn store(&self, off: usize, v: u32) -> Result {
        self.word(off)?.store(v, Ordering::Release);
        Ok(())
    }

    /// Loads the word at `off` with acquire ordering.
    pub(crate) fn load(&self, off: usize) -> Result<u32> {
        Ok(self.word(off)?.load(Ordering::Acquire))
    }

    /// Copies `dst.len()` bytes (a multiple of 4) from word-aligned offset
    /// `off`, word by word (each word is read once, so the copy is a
    /// snapshot the caller validates).
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
}

/// A zeroed, page-aligned `vmalloc` area for a kernel consumer's ring,
/// freed on drop; accessed through [`Words`] only.
///
/// # Invariants
///
/// `area` is a page-aligned `vzalloc` allocation of `len` (non-zero)
/// bytes, owned by `self` and freed only by its drop; the kernel accesses
/// it only through [`Words`].
pub(crate) struct KernelArea {
    area: NonNull<u8>,
    len: usize,
}

// SAFETY: By the type invariant, the area is owned and only accessed
// through atomics.
unsafe impl Send for KernelArea {}
// SAFETY: As for `Send`.
unsafe impl Sync for KernelArea {}

impl KernelArea {
    /// Allocates `len` zeroed bytes.
    pub(crate) fn new(len: usize) -> Result<Self> {
        if len == 0 {
            return Err(EINVAL);
        }
        // SAFETY: Plain allocation; the result is zeroed and page aligned,
        // or null.
        let area = unsafe { kernel::bindings::vzalloc_noprof(len as kernel::ffi::c_ulong) };
        let area = NonNull::new(area.cast::<u8>()).ok_or(ENOMEM)?;
        // INVARIANT: `area` is the fresh, page-aligned allocation of `len`
        // (non-zero, checked above) bytes, owned by the returned value.
        Ok(Self { area, len })
    }

    /// The area's words.
    pub(crate) fn words(&self) -> Words<'_> {
        // SAFETY: By the type invariant, the area is page aligned, `len`
        // bytes long and lives as long as `self`; nothing accesses it but
        // through `Words`.
        unsafe { Words::new(self.area, self.len) }
    }
}

impl Drop for KernelArea {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the area came from `vzalloc` and is
        // ours; no `Words` borrow outlives `self`.
        unsafe { kernel::bindings::vfree(self.area.as_ptr().cast()) };
    }
}

// SPDX-License-Identifier: GPL-2.0

//! Socket buffers (`struct sk_buff`) owned by the driver: a received packet
//! handed over by the UDP tunnel, or a packet being built for transmission.
//! Dropping an [`SkBuff`] frees it as a drop (`kfree_skb`, counted as lost
//! by the stack); [`SkBuff::consume`] frees it as delivered.

use core::ptr::NonNull;
use kernel::{bindings, prelude::*};

/// An owned `struct sk_buff`.
pub(crate) struct SkBuff(NonNull<bindings::sk_buff>);

// SAFETY: An skb owned by one holder may move between contexts (the stack
// queues them between CPUs all the time).
unsafe impl Send for SkBuff {}

impl SkBuff {
    /// Takes ownership of `skb`.
    ///
    /// # Safety
    ///
    /// `skb` is a valid skb whose reference the caller owns and gives away.
    pub(super) unsafe fn from_raw(skb: *mut bindings::sk_buff) -> Option<Self> {
        NonNull::new(skb).map(Self)
    }

    /// Gives up ownership.
    pub(super) fn into_raw(self) -> *mut bindings::sk_buff {
        let p = self.0.as_ptr();
        core::mem::forget(self);
        p
    }

    pub(super) fn as_raw(&self) -> *mut bindings::sk_buff {
        self.0.as_ptr()
    }

    /// Allocates an skb with `headroom` bytes reserved in front and room
    /// for `len` more bytes.
    pub(super) fn alloc(headroom: usize, len: usize) -> Result<Self> {
        let total = headroom.checked_add(len).ok_or(EINVAL)?;
        let size = kernel::ffi::c_uint::try_from(total).map_err(|_| EINVAL)?;
        // SAFETY: Plain allocation (process context, may sleep); no clone
        // flags, any NUMA node.
        let skb = unsafe { bindings::__alloc_skb(size, bindings::GFP_KERNEL, 0, bindings::NUMA_NO_NODE) };
        let skb = NonNull::new(skb).ok_or(ENOMEM)?;
        // SAFETY: Fresh skb with `total` bytes of tailroom.
        unsafe { bindings::skb_reserve(skb.as_ptr(), headroom as i32) };
        Ok(Self(skb))
    }

    /// Appends `len` bytes (must fit the tailroom) and returns them, zeroed.
    pub(super) fn put_zeroed(&mut self, len: usize) -> Result<&mut [u8]> {
        let l = kernel::ffi::c_uint::try_from(len).map_err(|_| EINVAL)?;
        // SAFETY: Valid skb we own.
        let room = unsafe { (*self.as_raw()).end - (*self.as_raw()).tail } as usize;
        if len > room {
            return Err(EINVAL);
        }
        // SAFETY: Checked against the tailroom above (`skb_put` panics on
        // overrun); the returned area is `len` bytes inside the skb.
        unsafe {
            let p = bindings::skb_put(self.as_raw(), l).cast::<u8>();
            core::ptr::write_bytes(p, 0, len);
            Ok(core::slice::from_raw_parts_mut(p, len))
        }
    }

    /// Prepends `hdr` (must fit the headroom); the data now starts there.
    pub(super) fn push(&mut self, hdr: &[u8]) -> Result {
        // SAFETY: Valid skb we own.
        let room = unsafe { (*self.as_raw()).data.offset_from((*self.as_raw()).head) } as usize;
        if hdr.len() > room {
            return Err(EINVAL);
        }
        // SAFETY: Checked against the headroom above (`skb_push` panics on
        // underrun); the returned area is `hdr.len()` bytes.
        unsafe {
            let p = bindings::skb_push(self.as_raw(), hdr.len() as u32).cast::<u8>();
            core::ptr::copy_nonoverlapping(hdr.as_ptr(), p, hdr.len());
        }
        Ok(())
    }

    /// The data, from its start to the tail (linear part only).
    pub(super) fn data_mut(&mut self) -> &mut [u8] {
        // SAFETY: Valid skb we own; data..tail is initialised and in the
        // head buffer.
        unsafe {
            let start = (*self.as_raw()).data;
            let end = bindings::skb_tail_pointer(self.as_raw());
            let len = end.offset_from(start).max(0) as usize;
            core::slice::from_raw_parts_mut(start, len)
        }
    }

    /// Marks the current data start as the network (IP) header.
    pub(super) fn reset_network_header(&mut self) {
        // SAFETY: Valid skb we own.
        unsafe { bindings::skb_reset_network_header(self.as_raw()) };
    }

    /// Makes the data linear, so [`Self::network_bytes`] sees all of it.
    pub(crate) fn linearize(&mut self) -> Result {
        // SAFETY: Valid skb we own.
        kernel::error::to_result(unsafe { bindings::skb_linearize(self.as_raw()) })
    }

    /// Bytes from the network header to the end of the linear data: the IP
    /// packet (call [`Self::linearize`] first for received skbs).
    pub(crate) fn network_bytes(&self) -> &[u8] {
        // SAFETY: Valid skb; the network header lies within the head buffer
        // at or before the tail, and the range is initialised packet data.
        unsafe {
            let start = bindings::skb_network_header(self.as_raw());
            let end = bindings::skb_tail_pointer(self.as_raw());
            let len = end.offset_from(start).max(0) as usize;
            core::slice::from_raw_parts(start, len)
        }
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: We own the reference; a drop is accounted as such.
        unsafe { bindings::kfree_skb(self.0.as_ptr()) };
    }
}

// SPDX-License-Identifier: GPL-2.0

//! Socket buffers (`struct sk_buff`) owned by the driver: a received packet
//! handed over by the UDP tunnel, or a packet being built for transmission.
//! Dropping an [`SkBuff`] frees it as a drop (`kfree_skb`, counted as lost
//! by the stack); [`SkBuff::consume`] frees it as delivered.
//!
//! A received skb may be non-linear (payload in page fragments or a
//! fragment list): its headers are made linear with `pskb_may_pull`
//! ([`SkBuff::make_linear`]), and the rest is read in place, never
//! linearised: [`SkBuff::for_each_chunk`] (`skb_seq_read`) and
//! [`SkBuff::copy_bits_raw`] (`skb_copy_bits`).

use core::ptr::NonNull;
use kernel::{bindings, prelude::*};

/// The flag of [`SkBuff::set_rx_vlan`]'s word: a VLAN ID is in its low bits.
const RX_VLAN_SET: u32 = 1 << 16;

/// The words of `cb` the driver keeps (see [`SkBuff::set_rx_vlan`]): the
/// VLAN tag's and [`SkBuff::set_icrc_deferred`]'s.
const RX_VLAN_WORD: usize = 0;
const ICRC_DEFERRED_WORD: usize = 1;
// Both inside `cb`'s 48 bytes.
const _: () = assert!(RX_VLAN_WORD < 12 && ICRC_DEFERRED_WORD < 12);

/// An owned `struct sk_buff`.
///
/// # Invariants
///
/// `self.0` is a valid `sk_buff` on which `self` owns one reference, and
/// no one else changes it while `self` holds it.  The reference is given
/// back by the drop (`kfree_skb`) or [`SkBuff::consume`], or passed on
/// by [`SkBuff::into_raw`].
pub(crate) struct SkBuff(NonNull<bindings::sk_buff>);

// SAFETY: An skb owned by one holder may move between contexts (the stack
// queues them between CPUs all the time).
unsafe impl Send for SkBuff {}
// SAFETY: `&SkBuff` only reads the skb (`skb_copy_bits`, `skb_seq_read` do
// not modify it).
unsafe impl Sync for SkBuff {}

impl SkBuff {
    /// Takes ownership of `skb`.
    ///
    /// # Safety
    ///
    /// `skb` is a valid skb whose reference the caller owns and gives away.
    pub(super) unsafe fn from_raw(skb: *mut bindings::sk_buff) -> Option<Self> {
        // INVARIANT: Per the function's safety requirements, the caller's
        // reference moves into the result.
        NonNull::new(skb).map(Self)
    }

    /// Gives up ownership: the reference passes to the caller.
    pub(super) fn into_raw(self) -> *mut bindings::sk_buff {
        let p = self.0.as_ptr();
        core::mem::forget(self);
        p
    }

    pub(super) fn as_raw(&self) -> *mut bindings::sk_buff {
        self.0.as_ptr()
    }

    /// Allocates an skb with `headroom` bytes reserved in front and room
    /// for `len` more bytes (process context: may sleep and reclaim).
    pub(super) fn alloc(headroom: usize, len: usize) -> Result<Self> {
        Self::alloc_gfp(headroom, len, bindings::GFP_KERNEL)
    }

    /// As [`SkBuff::alloc`], but giving up early and quietly
    /// (`__GFP_NORETRY | __GFP_NOWARN`) when memory is short: for a large
    /// buffer whose caller has a cheaper way without it.
    pub(super) fn alloc_opportunistic(headroom: usize, len: usize) -> Result<Self> {
        let noretry: bindings::gfp_t = 1 << bindings::___GFP_NORETRY_BIT;
        Self::alloc_gfp(
            headroom,
            len,
            bindings::GFP_KERNEL | bindings::__GFP_NOWARN | noretry,
        )
    }

    fn alloc_gfp(headroom: usize, len: usize, gfp: bindings::gfp_t) -> Result<Self> {
        let total = headroom.checked_add(len).ok_or(EINVAL)?;
        let size = kernel::ffi::c_uint::try_from(total)?;
        // SAFETY: Plain allocation (process context, may sleep: `gfp` is
        // `GFP_KERNEL` with modifiers); no clone flags, any NUMA node.
        let skb = unsafe { bindings::__alloc_skb(size, gfp, 0, bindings::NUMA_NO_NODE) };
        let skb = NonNull::new(skb).ok_or(ENOMEM)?;
        // SAFETY: Fresh skb with `total` bytes of tailroom.
        unsafe { bindings::skb_reserve(skb.as_ptr(), headroom as i32) };
        // INVARIANT: A fresh skb: its only reference is ours.
        Ok(Self(skb))
    }

    /// Bytes of tailroom.
    fn tailroom(&self) -> usize {
        // SAFETY: Valid skb we own (type invariant); `end` and `tail` are
        // offsets into the head buffer on 64-bit.
        unsafe { (*self.as_raw()).end.saturating_sub((*self.as_raw()).tail) as usize }
    }

    /// Appends `len` bytes (must fit the tailroom), lets `fill` write them
    /// through a raw pointer (to the `len` appended bytes, writable and
    /// inside the skb, not overlapping any Rust object), and returns them as
    /// a slice.
    ///
    /// # Safety
    ///
    /// `fill` must initialise all `len` bytes at the pointer it gets.
    pub(in crate::kapi) unsafe fn put_with(
        &mut self,
        len: usize,
        fill: impl FnOnce(*mut u8),
    ) -> Result<&[u8]> {
        let l = kernel::ffi::c_uint::try_from(len)?;
        if len > self.tailroom() {
            return Err(EINVAL);
        }
        // SAFETY: Valid skb we own (type invariant); checked against the
        // tailroom above (`skb_put` panics on overrun); the returned area is
        // `len` bytes inside the skb.
        let p = unsafe { bindings::skb_put(self.as_raw(), l).cast::<u8>() };
        fill(p);
        // SAFETY: `fill` initialised the `len` bytes (caller's contract);
        // they stay valid while `self` is borrowed.
        Ok(unsafe { core::slice::from_raw_parts(p, len) })
    }

    /// Appends a copy of `src` (must fit the tailroom).
    pub(super) fn put_bytes(&mut self, src: &[u8]) -> Result<&[u8]> {
        let fill = |dst: *mut u8| {
            // SAFETY: `dst` is `src.len()` writable bytes inside the skb
            // (`put_with`), so disjoint from the Rust slice `src`.
            unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) }
        };
        // SAFETY: `fill` writes all `src.len()` bytes.
        unsafe { self.put_with(src.len(), fill) }
    }

    /// Tags a received skb with the VLAN ID of the VLAN device it arrived
    /// on (`None`: not a VLAN device), kept in the skb's control buffer
    /// (`cb`, which belongs to the layer holding the skb: the driver, from
    /// the UDP tunnel's hand-over on) for completions made later, when the
    /// device may be gone.  [`SkBuff::rx_vlan`] reads it back; a clone
    /// copies it.
    pub(crate) fn set_rx_vlan(&mut self, vlan: Option<u16>) {
        let word = vlan.map_or(0u32, |id| RX_VLAN_SET | u32::from(id));
        self.set_cb_word(RX_VLAN_WORD, word);
    }

    /// The VLAN ID [`SkBuff::set_rx_vlan`] recorded (the receive hand-over
    /// always writes it when the driver takes the skb).
    pub(crate) fn rx_vlan(&self) -> Option<u16> {
        let word = self.cb_word(RX_VLAN_WORD);
        (word & RX_VLAN_SET != 0).then_some(word as u16)
    }

    /// Marks a received skb whose ICRC its receive task still has to check
    /// (or not), in its own word of `cb`.  The receive path sets it on
    /// every skb it queues.
    pub(crate) fn set_icrc_deferred(&mut self, deferred: bool) {
        self.set_cb_word(ICRC_DEFERRED_WORD, u32::from(deferred));
    }

    /// What [`SkBuff::set_icrc_deferred`] recorded.
    pub(crate) fn icrc_deferred(&self) -> bool {
        self.cb_word(ICRC_DEFERRED_WORD) != 0
    }

    /// Writes word `i` (one of the constants above) of `cb`.
    fn set_cb_word(&mut self, i: usize, v: u32) {
        // SAFETY: Valid skb (type invariant): a field's address, no access.
        let cb = unsafe { core::ptr::addr_of_mut!((*self.as_raw()).cb) };
        let word = cb.cast::<u32>().wrapping_add(i);
        // SAFETY: `word` is one of the 48-byte, 8-aligned `cb`'s words
        // (`i` < 12, asserted above), which the driver owns while it holds
        // the skb.
        unsafe { word.write(v) };
    }

    /// Reads word `i` (one of the constants above) of `cb`.
    fn cb_word(&self, i: usize) -> u32 {
        // SAFETY: Valid skb (type invariant): a field's address, no access.
        let cb = unsafe { core::ptr::addr_of!((*self.as_raw()).cb) };
        let word = cb.cast::<u32>().wrapping_add(i);
        // SAFETY: `word` is inside `cb` (`i` < 12), aligned, initialised
        // memory (the allocation zeroes it, and the driver writes its
        // words when it takes the skb).
        unsafe { word.read() }
    }

    /// The shared info (`skb_shinfo`): at `head + end` (`end` is an
    /// offset: `NET_SKBUFF_DATA_USES_OFFSET`, which 64-bit kernels have,
    /// and rrxe's Kconfig depends on `64BIT`).
    fn shinfo(&self) -> *mut bindings::skb_shared_info {
        let s = self.as_raw();
        // SAFETY: Valid skb (type invariant); a plain read of a field.
        let head = unsafe { (*s).head };
        // SAFETY: As above.
        let end = unsafe { (*s).end } as usize;
        // SAFETY: `end` is an offset within the head buffer, where the
        // shared info follows the data area.
        unsafe { head.add(end) }.cast()
    }

    /// Makes an skb being built a UDP GSO packet (`SKB_GSO_UDP_L4`) of
    /// `segs` segments of `gso_size` bytes of UDP payload (the last may
    /// be shorter), as a UDP socket's `UDP_SEGMENT` send does: the
    /// transport header at `transport` bytes from the data start, the
    /// checksum partial (`CHECKSUM_PARTIAL`, completed per segment by the
    /// segmentation or the device; the UDP header's checksum field must
    /// hold the pseudo-header sum).  The UDP header must be in the data
    /// already.  `EINVAL` if it is not.
    ///
    /// # Safety
    ///
    /// The skb was made by [`SkBuff::alloc`] or
    /// [`SkBuff::alloc_opportunistic`] and never cloned: its shared info
    /// is this `SkBuff`'s alone.
    pub(super) unsafe fn set_udp_gso(
        &mut self,
        transport: u16,
        gso_size: u16,
        segs: u16,
    ) -> Result {
        /// `offsetof(struct udphdr, check)`.
        const UDP_CHECK_OFFSET: u16 = 6;
        // SAFETY: Valid skb we own (type invariant); the function checks
        // the offsets against the linear data and sets only this skb's
        // checksum fields and transport header.
        if !unsafe { bindings::skb_partial_csum_set(self.as_raw(), transport, UDP_CHECK_OFFSET) } {
            return Err(EINVAL);
        }
        let sh = self.shinfo();
        // SAFETY: The shared info of an skb we own and never cloned
        // (function's contract): nothing else reads or writes it.
        unsafe { (*sh).gso_size = gso_size };
        // SAFETY: As above.
        unsafe { (*sh).gso_segs = segs };
        // SAFETY: As above.
        unsafe { (*sh).gso_type = bindings::SKB_GSO_UDP_L4 as u32 };
        Ok(())
    }

    /// Marks the current data start as the network (IP) header.
    pub(super) fn reset_network_header(&mut self) {
        // SAFETY: Valid skb we own (type invariant).
        unsafe { bindings::skb_reset_network_header(self.as_raw()) };
    }

    /// A clone sharing the packet data (`skb_clone`), for delivering one
    /// received packet to several consumers, who only read it; `None`
    /// without memory.
    pub(crate) fn clone_shared(&self) -> Option<Self> {
        // SAFETY: `self` owns a reference to a valid skb (type invariant);
        // `skb_clone` returns a new skb we own, or NULL.
        let p = unsafe { bindings::skb_clone(self.as_raw(), bindings::GFP_ATOMIC) };
        // SAFETY: `p` is a new skb owned by the caller, or NULL.
        unsafe { Self::from_raw(p) }
    }

    /// Total data length (`skb->len`: linear part and fragments).
    pub(crate) fn len(&self) -> usize {
        // SAFETY: Valid skb (type invariant); a plain read of a field we
        // own.
        unsafe { (*self.as_raw()).len as usize }
    }

    /// The memory the skb holds (`skb->truesize`: its head, fragments and
    /// fragment list, and the `sk_buff` itself), what receive queues are
    /// bounded by.
    pub(crate) fn truesize(&self) -> usize {
        // SAFETY: Valid skb (type invariant); a plain read of a field we
        // own.
        unsafe { (*self.as_raw()).truesize as usize }
    }

    /// Moves the data start back to the network header (a received skb's
    /// data starts at the UDP header), so that offsets count from the IP
    /// header.  `EINVAL` if the network header is not before the data.
    pub(crate) fn push_to_network_header(&mut self) -> Result {
        // SAFETY: Valid skb we own (type invariant); a plain read of a
        // field.
        let data = unsafe { (*self.as_raw()).data };
        // SAFETY: Valid skb we own (type invariant).
        let nh = unsafe { bindings::skb_network_header(self.as_raw()) };
        // SAFETY: Both pointers are in the skb's head buffer (one
        // allocation).
        let back = unsafe { data.offset_from(nh) };
        let back = u32::try_from(back)?;
        // SAFETY: `back` bytes before `data` are the IP and UDP headers the
        // stack already parsed, inside the head buffer (`skb_push` checks
        // the headroom).
        unsafe { bindings::skb_push(self.as_raw(), back) };
        Ok(())
    }

    /// Makes the first `n` bytes of data linear (`pskb_may_pull`); false
    /// if the packet is shorter than `n` or the pull fails.
    pub(crate) fn make_linear(&mut self, n: usize) -> bool {
        let Ok(n32) = u32::try_from(n) else {
            return false;
        };
        // SAFETY: Valid skb we own (type invariant); `pskb_may_pull` may
        // reallocate the head (no pointers into it are held across the
        // call: `&mut self`).
        unsafe { bindings::pskb_may_pull(self.as_raw(), n32) }
    }

    /// The linear part of the data (`skb_headlen` bytes from `data`).
    pub(crate) fn linear(&self) -> &[u8] {
        let s = self.as_raw();
        // SAFETY: Valid skb (type invariant); plain reads of fields we own.
        let (len, data_len, data) = unsafe { ((*s).len, (*s).data_len, (*s).data) };
        let head = len.saturating_sub(data_len) as usize;
        // SAFETY: `len - data_len` bytes from `data` are the skb's
        // initialised linear part, unchanged while `self` is borrowed (no
        // one else changes the skb: type invariant).
        unsafe { core::slice::from_raw_parts(data, head) }
    }

    /// Calls `f` on the data `[off, off + len)` piece by piece, in place
    /// (`skb_seq_read`: the linear part, then each fragment mapped in
    /// turn).  `EINVAL` if the range is outside the data.
    pub(crate) fn for_each_chunk(
        &self,
        off: usize,
        len: usize,
        mut f: impl FnMut(&[u8]),
    ) -> Result {
        let end = off.checked_add(len).ok_or(EINVAL)?;
        if end > self.len() {
            return Err(EINVAL);
        }
        if len == 0 {
            return Ok(());
        }
        let (from, to) = (u32::try_from(off)?, u32::try_from(end)?);
        // SAFETY: All-zeroes is a valid (unprepared) state; prepared next.
        let mut st: bindings::skb_seq_state = unsafe { core::mem::zeroed() };
        // SAFETY: Valid skb (type invariant); `[from, to)` is within its
        // data (checked).
        unsafe { bindings::skb_prepare_seq_read(self.as_raw(), from, to, &mut st) };
        let mut consumed = 0u32;
        let mut done = 0usize;
        while done < len {
            let mut data: *const u8 = core::ptr::null();
            // SAFETY: `st` was prepared for this skb; the returned block
            // (`n` bytes at `data`) stays mapped until the next call or
            // the abort below.
            let n = unsafe { bindings::skb_seq_read(consumed, &mut data, &mut st) } as usize;
            if n == 0 || data.is_null() {
                break;
            }
            let n = n.min(len - done);
            // SAFETY: `skb_seq_read` returned `n` (or more) readable bytes
            // at `data`, mapped until the next call.
            f(unsafe { core::slice::from_raw_parts(data, n) });
            done += n;
            consumed += n as u32;
        }
        // SAFETY: Unmaps a fragment left mapped if we stopped early; a
        // no-op otherwise.
        unsafe { bindings::skb_abort_seq_read(&mut st) };
        if done == len {
            Ok(())
        } else {
            Err(EINVAL)
        }
    }

    /// Copies `len` data bytes at `off` to `dst`.
    ///
    /// # Safety
    ///
    /// `dst` must be valid for writes of `len` bytes.
    pub(in crate::kapi) unsafe fn copy_bits_raw(
        &self,
        off: usize,
        dst: *mut u8,
        len: usize,
    ) -> Result {
        let o = i32::try_from(off)?;
        let l = i32::try_from(len)?;
        // SAFETY: Valid skb (type invariant); `skb_copy_bits` checks the
        // range against the data and copies from the linear part and
        // fragments; `dst` is valid for `len` bytes (caller's contract).
        kernel::error::to_result(unsafe {
            bindings::skb_copy_bits(self.as_raw(), o, dst.cast(), l)
        })
    }

    /// Copies `dst.len()` data bytes at `off` into `dst`.
    pub(crate) fn copy_bits(&self, off: usize, dst: &mut [u8]) -> Result {
        // SAFETY: `dst` is a valid mutable slice of its length.
        unsafe { self.copy_bits_raw(off, dst.as_mut_ptr(), dst.len()) }
    }

    /// Frees the skb as consumed (delivered), not as a drop.
    pub(crate) fn consume(self) {
        let p = self.into_raw();
        // SAFETY: We owned the reference (type invariant), now given back.
        unsafe { bindings::consume_skb(p) };
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: We own the reference (type invariant), given back once,
        // here; a drop is accounted as such.
        unsafe { bindings::kfree_skb(self.0.as_ptr()) };
    }
}

// SPDX-License-Identifier: GPL-2.0

//! The four ways the engine touches region memory (append to an outgoing
//! packet, copy an incoming packet's payload in, write bytes, an 8-byte
//! atomic), written once over [`Pieces`]: memory that can be walked page
//! by page with each piece mapped.  Pinned memory ([`super::MrMemory`])
//! and on-demand-paging memory while its pages are held
//! ([`super::odp`]) both implement it.
//!
//! Every operation is bounded by its length argument and by the region
//! (the walk refuses a range outside it), never sleeps and never
//! allocates: on-demand-paging memory runs them under its umem mutex,
//! which memory reclaim may need.

use kernel::{
    prelude::*,
    sync::atomic::{Atomic, Full},
};

use crate::kapi::net::{route::TxPacket, skb::SkBuff};

/// Memory walked page by page with each piece mapped.
pub(crate) trait Pieces {
    /// Runs `f(ptr, done, n)` on each piece of `[off, off + len)` in order:
    /// `ptr` points at `n` mapped bytes of the region, `done` is how many
    /// bytes of the range came before.  `EFAULT` if the range is not
    /// inside the region (nothing is visited then).  `f` must not sleep.
    fn for_each_piece(
        &self,
        off: usize,
        len: usize,
        f: impl FnMut(*mut u8, usize, usize),
    ) -> Result;
}

/// An 8-byte atomic operation on region memory ([`atomic64`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Atomic64Op {
    /// Stores `swap` if the value equals `compare`.
    CompareSwap { compare: u64, swap: u64 },
    /// Adds (wrapping).
    FetchAdd(u64),
    /// Stores the value (an ATOMIC WRITE), as one 8-byte store.
    Store(u64),
}

/// Appends `n` bytes of `m` at offset `off` to `pkt`, copying straight from
/// the pages into the skb, and calls `f` on each piece as written (to
/// checksum it while it is in cache).
pub(super) fn append_to(
    m: &impl Pieces,
    pkt: &mut TxPacket,
    off: usize,
    n: usize,
    mut f: impl FnMut(&[u8]),
) -> Result {
    let mut res = Ok(());
    m.for_each_piece(off, n, |src, _, len| {
        if res.is_err() {
            return;
        }
        // SAFETY: `src` is `len` mapped bytes of the region; the closure
        // writes exactly `len` bytes.  (User space may write the region
        // concurrently: the copy is a byte snapshot.)
        let put = unsafe {
            pkt.skb_mut()
                .put_with(len, |dst| core::ptr::copy_nonoverlapping(src, dst, len))
        };
        match put {
            Ok(written) => f(written),
            Err(e) => res = Err(e),
        }
    })?;
    res
}

/// Copies `n` bytes of `skb`'s data at `skb_off` into `m` at offset `off`,
/// from the skb's linear part and fragments directly into the pages.
pub(super) fn write_from_skb(
    m: &impl Pieces,
    off: usize,
    skb: &SkBuff,
    skb_off: usize,
    n: usize,
) -> Result {
    let mut res = Ok(());
    m.for_each_piece(off, n, |dst, at, len| {
        if res.is_ok() {
            // SAFETY: `dst` is `len` mapped, writable bytes of the region.
            res = unsafe { skb.copy_bits_raw(skb_off + at, dst, len) };
        }
    })?;
    res
}

/// Copies `src` into `m` at offset `off`.
pub(super) fn write_bytes(m: &impl Pieces, off: usize, src: &[u8]) -> Result {
    m.for_each_piece(off, src.len(), |dst, at, len| {
        // SAFETY: `dst` is `len` mapped, writable bytes of the region;
        // `src[at..at + len]` is in bounds (`for_each_piece` splits exactly
        // `src.len()` bytes).
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr().add(at), dst, len) };
    })
}

/// Performs `op` on the native-endian 8-byte value at offset `off` of `m`,
/// atomically with respect to every other atomic access to that memory (a
/// locked instruction on the mapped page: also against the CPUs of the
/// process that owns it), and returns the value found.  `EINVAL` if the
/// value is not 8-byte aligned in memory (a region may start at any
/// byte), `EFAULT` if it is outside the region.
pub(super) fn atomic64(m: &impl Pieces, off: usize, op: Atomic64Op) -> Result<u64> {
    let mut old = Err(EFAULT);
    m.for_each_piece(off, 8, |p, _, n| {
        // An aligned value never straddles a page: one piece of 8 bytes.
        old = if n != 8 || (p as usize) % 8 != 0 {
            Err(EINVAL)
        } else {
            // SAFETY: `p` is 8-byte aligned and points at 8 mapped bytes of
            // the region, valid for the call; every kernel access to the
            // value goes through an atomic (user space may access it
            // concurrently: memory shared with user space).
            let a = unsafe { Atomic::<i64>::from_ptr(p.cast::<i64>()) };
            Ok(atomic_op(a, op))
        };
    })?;
    old
}

/// Performs `op` on `a`; returns the value found.
fn atomic_op(a: &Atomic<i64>, op: Atomic64Op) -> u64 {
    let old = match op {
        Atomic64Op::CompareSwap { compare, swap } => {
            match a.cmpxchg(compare as i64, swap as i64, Full) {
                Ok(v) | Err(v) => v,
            }
        }
        Atomic64Op::FetchAdd(v) => a.fetch_add(v as i64, Full),
        Atomic64Op::Store(v) => a.xchg(v as i64, Full),
    };
    old as u64
}

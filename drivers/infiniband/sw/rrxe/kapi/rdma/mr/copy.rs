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
//! which memory reclaim may need.  This file calls no C function itself:
//! the pieces come mapped from [`Pieces`], and the skb side goes through
//! [`SkBuff`] and [`TxPacket`].

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
        let fill = |dst: *mut u8| {
            // User space may write the region concurrently: the copy is a
            // byte snapshot.
            // SAFETY: `src` is `len` mapped bytes of the region, `dst` `len`
            // writable bytes inside the skb (`put_with`): disjoint.
            unsafe { core::ptr::copy_nonoverlapping(src, dst, len) }
        };
        // SAFETY: `fill` writes exactly `len` bytes.
        let put = unsafe { pkt.skb_mut().put_with(len, fill) };
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
            // Every kernel access to the value goes through an atomic (user
            // space may access it concurrently: memory shared with it).
            // SAFETY: `p` is 8-byte aligned and points at 8 mapped bytes of
            // the region, valid for the call.
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

// KUnit cases run from rdma_rrxe only: the samples (which compile kapi
// with --cfg rrxe_sample) do not register them a second time.
#[cfg(not(rrxe_sample))]
#[kernel::macros::kunit_tests(rrxe_mr_copy)]
mod tests {
    use super::*;

    /// A region of 64 bytes in "pages" of 16 bytes, starting 4 bytes into
    /// its first page (as a region may start at any byte).
    struct Toy(core::cell::UnsafeCell<[u64; 10]>);

    const START: usize = 4;
    const PG: usize = 16;
    const LEN: usize = 64;

    impl Toy {
        fn new() -> Self {
            Self(core::cell::UnsafeCell::new([0; 10]))
        }

        fn bytes(&self) -> [u8; 80] {
            // SAFETY: Single-threaded test; no piece is mapped now.
            let words = unsafe { *self.0.get() };
            let mut out = [0u8; 80];
            for (i, w) in words.iter().enumerate() {
                out[i * 8..i * 8 + 8].copy_from_slice(&w.to_ne_bytes());
            }
            out
        }
    }

    impl Pieces for Toy {
        fn for_each_piece(
            &self,
            off: usize,
            len: usize,
            mut f: impl FnMut(*mut u8, usize, usize),
        ) -> Result {
            let end = off.checked_add(len).ok_or(EFAULT)?;
            if end > LEN {
                return Err(EFAULT);
            }
            let base = self.0.get().cast::<u8>();
            let (mut at, mut done) = (START + off, 0);
            while done < len {
                let n = (PG - at % PG).min(len - done);
                // SAFETY: `at + n <= START + LEN <= 80`: inside the array.
                f(unsafe { base.add(at) }, done, n);
                at += n;
                done += n;
            }
            Ok(())
        }
    }

    #[test]
    fn write_bytes_crosses_pages_in_order() {
        let t = Toy::new();
        let src: [u8; 40] = core::array::from_fn(|i| i as u8 + 1);
        assert!(write_bytes(&t, 10, &src).is_ok());
        let b = t.bytes();
        assert_eq!(&b[START + 10..START + 50], &src[..]);
        assert!(b[..START + 10].iter().all(|&x| x == 0));
        assert!(b[START + 50..].iter().all(|&x| x == 0));
        // Past the end: refused, nothing written.
        assert_eq!(write_bytes(&t, 30, &src), Err(EFAULT));
        assert_eq!(t.bytes(), b);
    }

    #[test]
    fn atomic64_needs_an_aligned_value_in_one_page() {
        let t = Toy::new();
        // Offset 4 is address 8: aligned, inside the second page.
        assert_eq!(atomic64(&t, 4, Atomic64Op::FetchAdd(5)), Ok(0));
        assert_eq!(atomic64(&t, 4, Atomic64Op::FetchAdd(2)), Ok(5));
        let cas = Atomic64Op::CompareSwap {
            compare: 7,
            swap: 9,
        };
        assert_eq!(atomic64(&t, 4, cas), Ok(7));
        assert_eq!(atomic64(&t, 4, cas), Ok(9));
        assert_eq!(atomic64(&t, 4, Atomic64Op::Store(1)), Ok(9));
        // Misaligned (address 9), and straddling pages (address 28).
        assert_eq!(atomic64(&t, 5, Atomic64Op::FetchAdd(1)), Err(EINVAL));
        assert_eq!(atomic64(&t, 24, Atomic64Op::FetchAdd(1)), Err(EINVAL));
        // Outside the region.
        assert_eq!(atomic64(&t, 60, Atomic64Op::FetchAdd(1)), Err(EFAULT));
    }
}

// SPDX-License-Identifier: GPL-2.0
//! 24-bit packet sequence numbers (PSN) and their modular arithmetic.
//!
//! PSNs live in `0..2^24` and wrap.  Ordering is only meaningful inside a
//! window of half the space: like C rxe's `psn_compare()`, `a` is "after"
//! `b` when `(a - b) mod 2^24` is in `1..2^23`, "before" when it is in
//! `2^23..2^24`.  That is computed exactly as C does, by shifting the 32-bit
//! difference left by 8 and reading it as a signed number, so
//! [`psn_compare`] returns the same sign as the C helper for every input
//! (including the ambiguous distance `2^23`, which reads as "before").

use core::cmp::Ordering;

/// The 24 significant bits of a PSN.
pub const PSN_MASK: u32 = 0x00ff_ffff;
/// Number of distinct PSNs.
pub const PSN_SPACE: u32 = 1 << 24;
/// Half the PSN space: the largest forward distance that still orders.
pub const PSN_HALF: u32 = 1 << 23;

/// C rxe's `psn_compare()`: positive if `a` is after `b`, zero if equal,
/// negative if `a` is before `b` (both taken modulo 2^24).
pub const fn psn_compare(a: u32, b: u32) -> i32 {
    (a.wrapping_sub(b) << 8) as i32
}

/// A packet sequence number, always reduced to 24 bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Psn(u32);

impl Psn {
    /// Largest PSN value.
    pub const MAX: Psn = Psn(PSN_MASK);

    /// Makes a PSN from the low 24 bits of `v` (high bits are dropped, as
    /// when the field is read from a BTH).
    pub const fn new(v: u32) -> Self {
        Psn(v & PSN_MASK)
    }

    /// The PSN as a number in `0..2^24`.
    pub const fn get(self) -> u32 {
        self.0
    }

    /// The following PSN (wraps from `0xffffff` to 0).
    pub const fn next(self) -> Self {
        self.add(1)
    }

    /// The preceding PSN (wraps from 0 to `0xffffff`).
    pub const fn prev(self) -> Self {
        self.sub(1)
    }

    /// `self + n` modulo 2^24.
    pub const fn add(self, n: u32) -> Self {
        Psn::new(self.0.wrapping_add(n))
    }

    /// `self - n` modulo 2^24.
    pub const fn sub(self, n: u32) -> Self {
        Psn::new(self.0.wrapping_sub(n))
    }

    /// Forward distance from `self` to `later`: the `n` in `0..2^24` with
    /// `self.add(n) == later`.
    pub const fn distance_to(self, later: Psn) -> u32 {
        later.0.wrapping_sub(self.0) & PSN_MASK
    }

    /// [`psn_compare`] of `self` against `other`.
    pub const fn compare(self, other: Psn) -> i32 {
        psn_compare(self.0, other.0)
    }

    /// Window ordering of `self` relative to `other` (see the module doc).
    pub fn cmp_window(self, other: Psn) -> Ordering {
        self.compare(other).cmp(&0)
    }

    /// `self` comes strictly after `other` in window order.
    pub const fn is_after(self, other: Psn) -> bool {
        self.compare(other) > 0
    }

    /// `self` comes strictly before `other` in window order.
    pub const fn is_before(self, other: Psn) -> bool {
        self.compare(other) < 0
    }

    /// `self` is one of the `len` PSNs starting at `start`
    /// (`start, start+1, ..., start+len-1`, wrapping).
    pub const fn in_window(self, start: Psn, len: u32) -> bool {
        start.distance_to(self) < len
    }
}

impl From<Psn> for u32 {
    fn from(p: Psn) -> u32 {
        p.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap() {
        assert_eq!(Psn::MAX.next(), Psn::new(0));
        assert_eq!(Psn::new(0).prev(), Psn::MAX);
        assert_eq!(Psn::new(0xff_fffe).add(5), Psn::new(3));
        assert_eq!(Psn::new(0x1234_5678).get(), 0x34_5678);
    }

    #[test]
    fn compare_like_c() {
        assert!(psn_compare(1, 0) > 0);
        assert!(psn_compare(0, 1) < 0);
        assert_eq!(psn_compare(7, 7), 0);
        // Across the wrap: 0 is after 0xffffff.
        assert!(psn_compare(0, 0xff_ffff) > 0);
        // High bits are ignored, like the C shift.
        assert_eq!(psn_compare(0xff00_0005, 5), 0);
        // Exactly half the space apart reads as "before", both ways.
        assert!(psn_compare(PSN_HALF, 0) < 0);
        assert!(psn_compare(0, PSN_HALF) < 0);
        assert!(psn_compare(PSN_HALF - 1, 0) > 0);
    }

    #[test]
    fn distance_and_window() {
        assert_eq!(Psn::new(0xff_fffe).distance_to(Psn::new(1)), 3);
        assert!(Psn::new(1).in_window(Psn::new(0xff_fffe), 4));
        assert!(!Psn::new(2).in_window(Psn::new(0xff_fffe), 4));
        assert!(!Psn::new(0).in_window(Psn::new(0), 0));
        assert_eq!(Psn::new(4).cmp_window(Psn::new(3)), Ordering::Greater);
    }
}

// SPDX-License-Identifier: GPL-2.0
//! Memory windows: the bind request a BIND_MW WQE carries (`wr.mw` of
//! `struct rxe_send_wqe`), and where a remote access through a bound
//! window lands in its region.

use super::wqe::{u32_at, u64_at};

/// The fields of a BIND_MW send WQE.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MwBind {
    /// Start of the window, as an address of the region.
    pub addr: u64,
    /// Its length; 0 unbinds a type 1 window.
    pub length: u64,
    /// The key of the region to bind to.
    pub mr_lkey: u32,
    /// The window's current rkey.
    pub mw_rkey: u32,
    /// The new rkey: only its low byte (the key byte) is used.
    pub rkey: u32,
    /// `IB_ACCESS_*` rights the window gives.
    pub access: u32,
}

/// Offset of `wr.mw` in a send WQE.
const WR_MW: usize = 24;

impl MwBind {
    /// Decodes the bind fields of a send WQE slot copy.
    pub fn decode(b: &[u8]) -> Option<Self> {
        Some(Self {
            addr: u64_at(b, WR_MW)?,
            length: u64_at(b, WR_MW + 8)?,
            mr_lkey: u32_at(b, WR_MW + 16)?,
            mw_rkey: u32_at(b, WR_MW + 20)?,
            rkey: u32_at(b, WR_MW + 24)?,
            access: u32_at(b, WR_MW + 28)?,
        })
    }
}

/// The region address that `[va, va + len)` names through a window of
/// `win_len` bytes starting at region address `win_addr`, or `None` if the
/// range is not inside the window.  A zero-based window is addressed from
/// 0; any other by the region's addresses.
pub fn window_address(
    win_addr: u64,
    win_len: u64,
    zero_based: bool,
    va: u64,
    len: u64,
) -> Option<u64> {
    let start = if zero_based {
        va
    } else {
        va.checked_sub(win_addr)?
    };
    if start.checked_add(len)? > win_len {
        return None;
    }
    win_addr.checked_add(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn va_based_window_bounds() {
        // Window [0x1000, 0x1100) of the region.
        assert_eq!(
            window_address(0x1000, 0x100, false, 0x1000, 0x100),
            Some(0x1000)
        );
        assert_eq!(
            window_address(0x1000, 0x100, false, 0x10ff, 1),
            Some(0x10ff)
        );
        assert_eq!(window_address(0x1000, 0x100, false, 0x10ff, 2), None);
        assert_eq!(window_address(0x1000, 0x100, false, 0xfff, 1), None);
        assert_eq!(
            window_address(0x1000, 0x100, false, 0x1100, 0),
            Some(0x1100)
        );
        assert_eq!(window_address(0x1000, 0x100, false, u64::MAX, 2), None);
    }

    #[test]
    fn zero_based_window_bounds() {
        assert_eq!(window_address(0x1000, 0x100, true, 0, 0x100), Some(0x1000));
        assert_eq!(
            window_address(0x1000, 0x100, true, 0x80, 0x80),
            Some(0x1080)
        );
        assert_eq!(window_address(0x1000, 0x100, true, 0x80, 0x81), None);
        assert_eq!(window_address(u64::MAX, 1, true, 0, 1), Some(u64::MAX));
        assert_eq!(window_address(u64::MAX, 2, true, 1, 1), None);
    }

    #[test]
    fn bind_fields_at_their_offsets() {
        let mut b = [0u8; 208];
        b[24..32].copy_from_slice(&0x1122_3344_5566_7788u64.to_ne_bytes());
        b[32..40].copy_from_slice(&4096u64.to_ne_bytes());
        b[40..44].copy_from_slice(&0x100u32.to_ne_bytes());
        b[44..48].copy_from_slice(&0x0800_0102u32.to_ne_bytes());
        b[48..52].copy_from_slice(&0x03u32.to_ne_bytes());
        b[52..56].copy_from_slice(&6u32.to_ne_bytes());
        let m = MwBind::decode(&b).unwrap();
        assert_eq!(
            m,
            MwBind {
                addr: 0x1122_3344_5566_7788,
                length: 4096,
                mr_lkey: 0x100,
                mw_rkey: 0x0800_0102,
                rkey: 3,
                access: 6
            }
        );
        assert_eq!(MwBind::decode(&b[..55]), None);
    }
}

// SPDX-License-Identifier: GPL-2.0

//! The kernel's CRC32 library (`lib/crc`), which uses the CPU's carry-less
//! multiply or CRC instructions where it can.  Safe for any byte slice: the
//! C function only reads it.

use kernel::bindings;

/// `crc32_le(seed, data)`: the little-endian (reflected) IEEE CRC-32 of
/// `data` continuing from register value `seed`, without pre- or
/// post-inversion, exactly as the C function.
pub(crate) fn crc32_le(seed: u32, data: &[u8]) -> u32 {
    // SAFETY: `data` is a valid slice for `data.len()` bytes for the call;
    // `crc32_le` only reads it.
    unsafe { bindings::crc32_le(seed, data.as_ptr().cast(), data.len()) }
}

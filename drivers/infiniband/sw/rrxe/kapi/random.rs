// SPDX-License-Identifier: GPL-2.0

//! The kernel's random number generator (`get_random_bytes`), safe for any
//! byte slice: the C function writes exactly its length.

use kernel::bindings;

/// Fills `buf` with cryptographically secure random bytes.
pub(crate) fn fill(buf: &mut [u8]) {
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the
    // duration of the call; `get_random_bytes` writes exactly that many.
    unsafe { bindings::get_random_bytes(buf.as_mut_ptr().cast(), buf.len()) };
}

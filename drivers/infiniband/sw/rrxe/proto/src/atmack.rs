// SPDX-License-Identifier: GPL-2.0
//! Atomic Acknowledge Extended Transport Header (AtomicAckETH, 8 bytes):
//! the original remote value returned by CmpSwap / FetchAdd.

use zerocopy::big_endian::U64;

use super::header::Header;

/// Atomic acknowledge extended transport header.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    zerocopy_derive::FromBytes,
    zerocopy_derive::IntoBytes,
    zerocopy_derive::KnownLayout,
    zerocopy_derive::Immutable,
    zerocopy_derive::Unaligned,
)]
#[repr(C)]
pub struct AtomicAck {
    orig: U64,
}

impl Header for AtomicAck {}

impl AtomicAck {
    /// An AtomicAckETH carrying `orig`.
    pub fn new(orig: u64) -> Self {
        AtomicAck {
            orig: U64::new(orig),
        }
    }

    /// Value found at the remote address before the atomic operation.
    pub fn orig(&self) -> u64 {
        self.orig.get()
    }
}

// SPDX-License-Identifier: GPL-2.0
//! Atomic Acknowledge Extended Transport Header (AtomicAckETH, 8 bytes):
//! the original remote value returned by CmpSwap / FetchAdd.

use zerocopy::big_endian::U64;

use super::header::{wire_header, Header};

wire_header! {
    /// Atomic acknowledge extended transport header.
    pub struct AtomicAck {
        orig: U64,
    }
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

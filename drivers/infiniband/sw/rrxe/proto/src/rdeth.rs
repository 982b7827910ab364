// SPDX-License-Identifier: GPL-2.0
//! Reliable Datagram Extended Transport Header (RDETH, 4 bytes): the EE
//! context number.  rxe has no RD service; this exists so RD packets parse.

use zerocopy::big_endian::U32;

use super::header::{wire_header, Header};

/// EE-context bits.
pub const RDETH_EEN_MASK: u32 = 0x00ff_ffff;

wire_header! {
    /// Reliable datagram extended transport header.
    pub struct Rdeth {
        een: U32,
    }
}

impl Header for Rdeth {}

impl Rdeth {
    /// An RDETH for EE context `een` (24 bits).
    pub fn new(een: u32) -> Self {
        Rdeth {
            een: U32::new(een & RDETH_EEN_MASK),
        }
    }

    /// End-to-end context number.
    pub fn een(&self) -> u32 {
        self.een.get() & RDETH_EEN_MASK
    }
}

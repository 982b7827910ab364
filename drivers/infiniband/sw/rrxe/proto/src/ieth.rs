// SPDX-License-Identifier: GPL-2.0
//! Invalidate Extended Transport Header (IETH, 4 bytes): the rkey a
//! SEND with Invalidate asks the responder to invalidate.

use zerocopy::big_endian::U32;

use super::header::{wire_header, Header};

wire_header! {
    /// Invalidate extended transport header.
    pub struct Ieth {
        rkey: U32,
    }
}

impl Header for Ieth {}

impl Ieth {
    /// An IETH naming `rkey`.
    pub fn new(rkey: u32) -> Self {
        Ieth {
            rkey: U32::new(rkey),
        }
    }

    /// The rkey to invalidate.
    pub fn rkey(&self) -> u32 {
        self.rkey.get()
    }
}

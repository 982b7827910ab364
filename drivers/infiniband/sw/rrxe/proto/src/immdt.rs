// SPDX-License-Identifier: GPL-2.0
//! Immediate Data header (ImmDt, 4 bytes).  The value is opaque: it is
//! delivered to the receiver's completion exactly as sent, which in the
//! kernel is a `__be32`; [`Immdt::raw`] gives those bytes unchanged.

use super::header::{wire_header, Header};

wire_header! {
    /// Immediate data extended transport header.
    pub struct Immdt {
        imm: [u8; 4],
    }
}

impl Header for Immdt {}

impl Immdt {
    /// Immediate data from its wire bytes.
    pub fn from_raw(imm: [u8; 4]) -> Self {
        Immdt { imm }
    }

    /// Immediate data holding `v` in network byte order.
    pub fn from_u32(v: u32) -> Self {
        Immdt {
            imm: v.to_be_bytes(),
        }
    }

    /// The wire bytes (a kernel `__be32`).
    pub fn raw(&self) -> [u8; 4] {
        self.imm
    }

    /// The value read as a big-endian number.
    pub fn value(&self) -> u32 {
        u32::from_be_bytes(self.imm)
    }
}
